-- start_flow_with_states starts a run (optionally with a given id) and returns get_run_with_states of it.
begin;
select plan(5);

select pgflow_tests.setup_flow('sequential');
select pgflow.start_flow_with_states('sequential', '{"a": 1}', '00000000-0000-0000-0000-0000000000bb') as s \gset

select is(:'s'::jsonb, pgflow.get_run_with_states('00000000-0000-0000-0000-0000000000bb'),
          'returns the run with its states');
select is(:'s'::jsonb->'run'->>'status', 'started', 'the run is started');
select is(jsonb_array_length(:'s'::jsonb->'steps'), 3, 'with all its steps');
select is((select count(*) from pgflow.step_tasks where run_id = '00000000-0000-0000-0000-0000000000bb'),
          1::bigint, 'the root step was started');
select ok((pgflow.start_flow_with_states('sequential', '{}')->'run'->>'run_id') is not null,
          'without a run_id one is generated');

select * from finish();
rollback;
