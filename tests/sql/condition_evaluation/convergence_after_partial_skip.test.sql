-- Diamond a -> (b, c) -> d: b is skipped by its condition, c completes; d runs once both are
-- resolved, with only c in its input.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', array['a'], required_input_pattern => '{"a": {"b": true}}');
select pgflow.add_step('f', 'c', array['a']);
select pgflow.add_step('f', 'd', array['b', 'c']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'a', 0, '{"b": false}') \g /dev/null
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'd'$$,
                  $$values ('created', 1)$$, 'd waits for c (b counted as done)');
select pgflow_tests.complete_step_task(:'run', 'c', 0, '"C"') \g /dev/null
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'd')$$,
                  $$values ('{"c": "C"}'::jsonb)$$, 'd runs with c only');
select pgflow.complete_task(:'run', 'd', 0, '"D"') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"d": "D"}'::jsonb)$$,
                  'the run completes');

select * from finish();
rollback;
