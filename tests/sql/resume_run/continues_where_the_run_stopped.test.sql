-- resume_run of a run failed by one map element: completed steps and tasks keep their outputs;
-- the failed and the cancelled element are queued again with fresh attempts and new messages;
-- the run is started again and finishes with the output an uninterrupted run would have had.
begin;
select plan(10);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'first');
select pgflow.add_step('f', 'each', array['first'], step_type => 'map');
select pgflow.add_step('f', 'total', array['each']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'first', 0, '[10, 20, 30]') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'each', 0, '11') \g /dev/null
select pgflow_tests.start_task(:'run', 'each', 2) \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'each', 1, 'flaky') \g /dev/null
select is((select status from pgflow.runs), 'failed', '(the run failed through element 1)');
create temp table completed_before as select * from pgflow.step_tasks where status = 'completed';

select is((pgflow.resume_run(:'run')).status, 'started', 'returns the run, started again');
select results_eq($$select status, failed_at, cancelled_at from pgflow.runs$$,
                  $$values ('started', null::timestamptz, null::timestamptz)$$, 'no failure left on the run');
select results_eq($$select step_slug, status, remaining_tasks, error_message from pgflow.step_states order by step_slug$$,
                  $$values ('each', 'started', 2, null::text), ('first', 'completed', 0, null), ('total', 'created', null, null)$$,
                  'the failed step is started again with two tasks left');
select results_eq($$select task_index, status, attempts_count, error_message, started_at, failed_at from pgflow.step_tasks
                    where step_slug = 'each' and task_index > 0 order by task_index$$,
                  $$values (1, 'queued', 0, null::text, null::timestamptz, null::timestamptz),
                           (2, 'queued', 0, null, null, null)$$,
                  'the failed and the cancelled element are queued with fresh attempts');
select is((select count(*)::int from (select * from completed_before except select * from pgflow.step_tasks) x), 0,
          'completed tasks are untouched, outputs included');
select results_eq($$select array_agg(msg_id order by msg_id) from pgflow_tests.queue_msg_ids('f') msg_id$$,
                  $$select array_agg(message_id order by message_id) from pgflow.step_tasks where status = 'queued'$$,
                  'each queued task has a new message in the queue, and nothing else is there');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$') offset 6$$,
                  $$values ('run:started'), ('step:each:started')$$, 'run:started and the step''s step:started are published');

select pgflow_tests.complete_step_task(:'run', 'each', 1, '21') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'each', 2, '31') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'total', 0, '63') \g /dev/null
select is((select output from pgflow.step_states where step_slug = 'each'), '[11, 21, 31]'::jsonb,
          'the map output keeps element order across the resumption');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"total": 63}'::jsonb)$$,
                  'the run completes');

select * from finish();
rollback;
