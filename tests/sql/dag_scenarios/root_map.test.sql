-- Root map over the run input: one task per element (element as input), outputs aggregated in
-- order, the dependent single step gets the array, the run completes.
begin;
select plan(7);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'double', step_type => 'map');
select pgflow.add_step('f', 'total', array['double']);
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset

select results_eq($$select initial_tasks, remaining_tasks, status from pgflow.step_states where step_slug = 'double'$$,
                  $$values (3, 3, 'started')$$, 'three tasks planned');
create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select task_index, input from c1 order by task_index$$,
                  $$values (0, '1'::jsonb), (1, '2'::jsonb), (2, '3'::jsonb)$$, 'each task gets its element');
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb((input #>> '{}')::int * 2))
from (select * from c1 order by task_index desc) c \g /dev/null

create temp table c2 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c2$$, $$values ('total', '{"double": [2, 4, 6]}'::jsonb)$$,
                  'total gets the ordered array');
select pgflow.complete_task(run_id, step_slug, task_index, '12') from c2 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"total": 12}'::jsonb)$$,
                  'the run completed');
select is((select count(*)::int from pgflow.step_tasks where status = 'completed'), 4, 'four tasks completed');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 4::bigint), 'all messages archived');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:double:started'), ('step:double:completed'), ('step:total:started'),
                           ('step:total:completed'), ('run:completed')$$,
                  'one step:completed for the map, after its last task');

select * from finish();
rollback;
