-- A single step produces an array, a dependent map fans out over it (sized when the parent
-- completes), and a final step joins the mapped results.
begin;
select plan(7);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'upper', array['list'], step_type => 'map');
select pgflow.add_step('f', 'join', array['upper']);
select run_id as run from pgflow.start_flow('f', '{"words": "a b"}') \gset

select is((select initial_tasks from pgflow.step_states where step_slug = 'upper'), null::int, 'map size unknown at start');
create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb(string_to_array(flow_input->>'words', ' '))) from c1 \g /dev/null
select results_eq($$select initial_tasks, status from pgflow.step_states where step_slug = 'upper'$$,
                  $$values (2, 'started')$$, 'sized from list''s output');

create temp table c2 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, task_index, input from c2 order by task_index$$,
                  $$values ('upper', 0, '"a"'::jsonb), ('upper', 1, '"b"'::jsonb)$$, 'one task per element');
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb(upper(input #>> '{}'))) from c2 \g /dev/null

create temp table c3 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c3$$, $$values ('join', '{"upper": ["A", "B"]}'::jsonb)$$,
                  'join gets the mapped array');
select pgflow.complete_task(run_id, step_slug, task_index, '"A-B"') from c3 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"join": "A-B"}'::jsonb)$$,
                  'the run completed');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 4::bigint), 'all messages archived');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:list:started'), ('step:list:completed'), ('step:upper:started'),
                           ('step:upper:completed'), ('step:join:started'), ('step:join:completed'), ('run:completed')$$,
                  'events in order');

select * from finish();
rollback;
