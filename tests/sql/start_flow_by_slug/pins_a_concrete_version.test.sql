-- start_flow_by_slug starts the concrete version named, active or not, whatever its alias
-- points to; an unknown slug is P0002 naming it (an alias is not a slug). The states variant
-- does the same and returns the run with its steps.
begin;
select plan(6);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');

select is((select flow_slug from pgflow.start_flow_by_slug('greetUserV2', '{}')), 'greetUserV2',
          'an inactive version starts when pinned');
select is((select flow_slug from pgflow.start_flow_by_slug('greetUserV1', '{}')), 'greetUserV1', 'so does the active one');
select throws_ok($$select pgflow.start_flow_by_slug('greetUser', '{}')$$, 'P0002', 'Flow "greetUser" does not exist',
                 'an alias is not a concrete slug');
select is(pgflow.start_flow_with_states_by_slug('greetUserV2', '{"a": 1}')->'run'->>'flow_slug', 'greetUserV2',
          'start_flow_with_states_by_slug pins too');
select is(jsonb_array_length(pgflow.start_flow_with_states_by_slug('greetUserV2', '{}')->'steps'), 1, 'and returns the steps');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV1', 'pinned starts never change the alias');

select * from finish();
rollback;
