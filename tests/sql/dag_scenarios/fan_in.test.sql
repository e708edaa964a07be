-- Fan-in: root_a and root_b run in parallel (one read claims both), last waits for both and
-- gets both outputs; the run completes with last's output.
begin;
select plan(6);
select pgflow_tests.install_realtime_stub();
select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{"base": 5}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('two_roots', 30, 10);
select results_eq($$select step_slug, flow_input from c1 order by step_slug$$,
                  $$values ('root_a', '{"base": 5}'::jsonb), ('root_b', '{"base": 5}'::jsonb)$$, 'both roots claimed together');
select pgflow.complete_task(run_id, 'root_b', 0, to_jsonb((flow_input->>'base')::int * 2)) from c1 where step_slug = 'root_b' \g /dev/null
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'last'$$,
                  $$values ('created', 1)$$, 'last waits for root_a');
select pgflow.complete_task(run_id, 'root_a', 0, to_jsonb((flow_input->>'base')::int + 1)) from c1 where step_slug = 'root_a' \g /dev/null

create temp table c2 as select * from pgflow_tests.read_and_start('two_roots', 30, 10);
select results_eq($$select step_slug, input from c2$$, $$values ('last', '{"root_a": 6, "root_b": 10}'::jsonb)$$,
                  'last gets both outputs');
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb((input->>'root_a')::int + (input->>'root_b')::int)) from c2 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"last": 16}'::jsonb)$$,
                  'the run completed');
select is((select (active, archived) from pgflow_tests.queue_counts('two_roots')), (0::bigint, 3::bigint), 'all messages archived');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:root_a:started'), ('step:root_b:started'), ('step:root_b:completed'),
                           ('step:root_a:completed'), ('step:last:started'), ('step:last:completed'), ('run:completed')$$,
                  'events in order');

select * from finish();
rollback;
