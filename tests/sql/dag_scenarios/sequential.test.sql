-- Sequential flow first -> second -> last, driven like a worker (read, start_tasks,
-- complete_task): each step gets the previous output, the run completes with the leaf output,
-- counters reach zero, every message is archived, and the events come in order.
begin;
select plan(10);
select pgflow_tests.install_realtime_stub();
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{"n": 1}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('sequential', 30, 10);
select results_eq($$select step_slug, input, flow_input from c1$$,
                  $$values ('first', '{}'::jsonb, '{"n": 1}'::jsonb)$$, 'round 1: first, with the flow input');
select pgflow.complete_task(run_id, step_slug, task_index, jsonb_build_object('v', (flow_input->>'n')::int + 1)) from c1 \g /dev/null

create temp table c2 as select * from pgflow_tests.read_and_start('sequential', 30, 10);
select results_eq($$select step_slug, input, flow_input from c2$$,
                  $$values ('second', '{"first": {"v": 2}}'::jsonb, null::jsonb)$$, 'round 2: second, with first''s output');
select pgflow.complete_task(run_id, step_slug, task_index, jsonb_build_object('v', (input->'first'->>'v')::int * 10)) from c2 \g /dev/null

create temp table c3 as select * from pgflow_tests.read_and_start('sequential', 30, 10);
select results_eq($$select step_slug, input from c3$$,
                  $$values ('last', '{"second": {"v": 20}}'::jsonb)$$, 'round 3: last, with second''s output');
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb('done ' || (input->'second'->>'v'))) from c3 \g /dev/null

select results_eq($$select status, remaining_steps, output, (completed_at is not null) from pgflow.runs$$,
                  $$values ('completed', 0, '{"last": "done 20"}'::jsonb, true)$$, 'the run completed with the leaf output');
select results_eq($$select step_slug, status, remaining_tasks, remaining_deps, output from pgflow.step_states order by step_slug$$,
                  $$values ('first', 'completed', 0, 0, '{"v": 2}'::jsonb), ('last', 'completed', 0, 0, '"done 20"'),
                           ('second', 'completed', 0, 0, '{"v": 20}')$$, 'every step completed with its output');
select is((select count(*)::int from pgflow.step_tasks where status = 'completed' and attempts_count = 1), 3,
          'three tasks, each completed on its first attempt');
select is((select (active, archived) from pgflow_tests.queue_counts('sequential')), (0::bigint, 3::bigint),
          'no active message, three archived');
select is_empty($$select * from pgflow_tests.read_and_start('sequential', 30, 10)$$, 'nothing left to claim');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:first:started'), ('step:first:completed'), ('step:second:started'),
                           ('step:second:completed'), ('step:last:started'), ('step:last:completed'), ('run:completed')$$,
                  'events in order');
select results_eq($$select payload->'output', payload->>'flow_slug' from realtime.messages where event = 'run:completed'$$,
                  $$values ('{"last": "done 20"}'::jsonb, 'sequential')$$, 'run:completed carries the output');

select * from finish();
rollback;
