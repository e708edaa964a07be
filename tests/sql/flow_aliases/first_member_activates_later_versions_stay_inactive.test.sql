-- Startup deployment under an alias: the first version of an alias becomes its active
-- version; a later version compiles completely but stays inactive; checking either again at a
-- restart keeps its state. Starting the alias starts the active version.
begin;
select plan(10);

select is(pgflow_tests.deploy('greetUserV1', 'greetUser') - 'routes' - 'flow_control' - 'differences' - 'mismatchKind',
          '{"status": "compiled", "queue_mode": "flow", "queue_name": "greetuserv1", "flow_alias": "greetUser",
            "activation": "activated", "active_flow_slug": "greetUserV1"}'::jsonb,
          'the first version compiles and activates the empty alias');
select is(pgflow_tests.deploy('greetUserV2', 'greetUser', jsonb_build_array(
            pgflow_tests.step_shape('greet'), pgflow_tests.step_shape('log', array['greet'])))
          - 'routes' - 'flow_control' - 'differences' - 'mismatchKind',
          '{"status": "compiled", "queue_mode": "flow", "queue_name": "greetuserv2", "flow_alias": "greetUser",
            "activation": "inactive", "active_flow_slug": "greetUserV1"}'::jsonb,
          'a second version compiles (another shape is fine) and stays inactive');
select results_eq($$select flow_slug, flow_alias from pgflow.flows order by flow_slug$$,
                  $$values ('greetUserV1'::text, 'greetUser'::text), ('greetUserV2', 'greetUser')$$,
                  'both are members of the alias');
select results_eq($$select step_slug from pgflow.steps where flow_slug = 'greetUserV2' order by step_index$$,
                  $$values ('greet'::text), ('log')$$, 'the inactive version is compiled completely');
select is(array(select queue_name::text from pgmq.meta order by 1), array['greetuserv1', 'greetuserv2'],
          'each version has its own queue, named after its concrete slug');

select is(pgflow_tests.deploy('greetUserV1', 'greetUser')->>'activation', 'active',
          'rechecking the active version keeps it active');
select is(pgflow_tests.deploy('greetUserV2', 'greetUser', jsonb_build_array(
            pgflow_tests.step_shape('greet'), pgflow_tests.step_shape('log', array['greet'])))
          ->> 'activation', 'inactive', 'rechecking an inactive version leaves it inactive');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV1', 'the alias still points to the first version');
select is((select flow_slug from pgflow.start_flow('greetUser', '{}')), 'greetUserV1',
          'start_flow(alias) starts the active version');

select is(pgflow_tests.deploy('plainFlow', null)->>'activation', 'activated',
          'a flow deployed without an alias is the active version of its self-alias');

select * from finish();
rollback;
