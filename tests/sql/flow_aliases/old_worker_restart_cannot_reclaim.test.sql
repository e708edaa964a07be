-- After an operator activated V2, restarting a V1 worker (the same startup deployment that
-- once activated V1) verifies V1 and leaves the alias on V2; so does a V1 worker failing at
-- startup. Only activate_flow_version moves the pointer back (a rollback).
begin;
select plan(6);
set local pgflow.local = 'off';

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');

select is(pgflow_tests.deploy('greetUserV1', 'greetUser') - 'routes' - 'flow_control' - 'differences' - 'mismatchKind'
          - 'queue_mode' - 'queue_name',
          '{"status": "verified", "flow_alias": "greetUser", "activation": "inactive", "active_flow_slug": "greetUserV2"}'::jsonb,
          'a restarted V1 worker verifies V1, which is inactive');
select is(pgflow_tests.deploy('greetUserV1', 'greetUser', jsonb_build_array(pgflow_tests.step_shape('other')))
          ->> 'status', 'mismatch', 'a V1 worker with a changed shape fails to start');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV2', 'neither reclaimed the alias');
select is((select flow_slug from pgflow.start_flow('greetUser', '{}')), 'greetUserV2', 'new runs start V2');

select is((pgflow.activate_flow_version('greetUser', 'greetUserV1', 'greetUserV2')).flow_slug, 'greetUserV1',
          'a rollback is an activation expecting the current version');
select is((select flow_slug from pgflow.start_flow('greetUser', '{}')), 'greetUserV1', 'new runs start V1 again');

select * from finish();
rollback;
