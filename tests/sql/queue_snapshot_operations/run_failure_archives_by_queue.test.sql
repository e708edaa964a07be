-- When a run fails (a task exhausted with when_exhausted = fail, or a `fail` condition), its
-- unfinished tasks are cancelled and their messages archived from each task's own queue
-- snapshot, grouped by queue.
begin;
\i _move_to_alt.sql
select plan(8);

-- Exhaustion: "bad" fails for good while map "items" has tasks in alt and in f.
select pgflow.create_flow('f', max_attempts => 1, timeout => 5);
select pgflow.add_step('f', 'bad');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset
select pgflow_tests.start_task(:'run', 'bad');
select pgflow_tests.start_task(:'run', 'items', 0);
select pg_temp.move_to_alt('items', 0, :'run');
select pg_temp.move_to_alt('items', 2, :'run');
create temp table ids_f as select step_slug, task_index, queue_name, message_id from pgflow.step_tasks where run_id = :'run';
select pgflow.fail_task(:'run', 'bad', 0, 'boom');

select is((select status from pgflow.runs where run_id = :'run'), 'failed', 'exhaustion: the run failed');
select results_eq(format($$select task_index, status from pgflow.step_tasks where run_id = %L and step_slug = 'items' order by 1$$, :'run'),
                  $$values (0, 'cancelled'::text), (1, 'cancelled'), (2, 'cancelled')$$, 'exhaustion: the map tasks are cancelled');
select set_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, $$select message_id from ids_f where queue_name = 'alt'$$,
              'exhaustion: the tasks in alt were archived from alt');
select set_eq($$select pgflow_tests.queue_msg_ids('f', true)$$, $$select message_id from ids_f where queue_name = 'f'$$,
              'exhaustion: the others (and the failed task) were archived from f');

-- Condition failure: "gate" (when_unmet = fail) becomes ready when "open" completes, while
-- "slow" is still running with its message in alt.
delete from pgmq.a_alt;
select pgflow.create_flow('g', timeout => 5);
select pgflow.add_step('g', 'slow');
select pgflow.add_step('g', 'open');
select pgflow.add_step('g', 'gate', array['open'], required_input_pattern => '{"open": {"pass": true}}', when_unmet => 'fail');
select run_id as run2 from pgflow.start_flow('g', '{}') \gset
select pgflow_tests.start_task(:'run2', 'slow');
select pg_temp.move_to_alt('slow', 0, :'run2') as slow_msg \gset
select pgflow_tests.complete_step_task(:'run2', 'open', 0, '{"pass": false}');

select is((select status from pgflow.runs where run_id = :'run2'), 'failed', 'condition: the run failed');
select is((select status from pgflow.step_tasks where run_id = :'run2' and step_slug = 'slow'), 'cancelled',
          'condition: the running task is cancelled');
select results_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, array[:slow_msg::bigint],
                  'condition: its message was archived from alt');
select is((pgflow_tests.queue_counts('g')).active, 0::bigint, 'condition: nothing is left active in g');

select * from finish();
rollback;
