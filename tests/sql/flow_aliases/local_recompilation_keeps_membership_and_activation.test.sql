-- On a local database a changed definition recompiles destructively (runs, steps, routes and
-- private queues replaced) but keeps the flow's identity row: its alias membership and the
-- alias's active pointer survive, for the active and for an inactive version.
begin;
select plan(8);
set local pgflow.local = 'on';

select pgflow_tests.deploy('greetUserV1', 'greetUser', null, 'step');
select pgflow_tests.deploy('greetUserV2', 'greetUser', null, 'step');
select updated_at as pointer_changed from pgflow.flow_aliases where flow_alias = 'greetUser' \gset
select run_id as run from pgflow.start_flow('greetUser', '{}') \gset

select is(pgflow_tests.deploy('greetUserV1', 'greetUser', jsonb_build_array(pgflow_tests.step_shape('hello')), 'step')
          - 'routes' - 'flow_control' - 'differences',
          '{"status": "recompiled", "mismatchKind": "shape", "queue_mode": "step", "queue_name": null,
            "flow_alias": "greetUser", "activation": "active", "active_flow_slug": "greetUserV1"}'::jsonb,
          'the active version recompiles and stays active');
select is(pgflow_tests.deploy('greetUserV2', 'greetUser', jsonb_build_array(pgflow_tests.step_shape('hi')), 'flow')
          ->> 'activation', 'inactive', 'an inactive version recompiles (into another queue mode) and stays inactive');
select results_eq($$select flow_slug, flow_alias, queue_mode from pgflow.flows order by flow_slug$$,
                  $$values ('greetUserV1'::text, 'greetUser'::text, 'step'::text), ('greetUserV2', 'greetUser', 'flow')$$,
                  'both keep their membership');
select results_eq($$select flow_slug, updated_at from pgflow.flow_aliases$$,
                  $$values ('greetUserV1'::text, '$$ || :'pointer_changed' || $$'::timestamptz)$$,
                  'the active pointer is untouched');
select is((select count(*) from pgflow.runs where run_id = :'run'), 0::bigint, 'the recompiled version''s runs are gone');
select is(array(select step_slug from pgflow.steps where flow_slug = 'greetUserV1'), array['hello'], 'its steps replaced');
select is(array(select queue_name::text from pgmq.meta order by 1), array['greetuserv1__hello', 'greetuserv2'],
          'and its private queues replaced, each named after its concrete slug');
select is((select flow_slug from pgflow.start_flow('greetUser', '{}')), 'greetUserV1',
          'the alias starts the recompiled active version');

select * from finish();
rollback;
