-- Results that complete nothing, in one batch with results that do: a result for a run that
-- already failed (late: the task stays cancelled, its message is archived), a result for a
-- task that is still queued (unchanged, message kept), the same result twice (the second sees
-- a completed task), and results for a task or run that does not exist (nothing returned).
begin;
select plan(7);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select run_id as done_run from pgflow.start_flow('f', '{}') \gset
select run_id as failed_run from pgflow.start_flow('f', '{}') \gset
select run_id as queued_run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'done_run', 'a');
select pgflow_tests.start_task(:'failed_run', 'a');
select pgflow_tests.start_task(:'failed_run', 'b');
select pgflow._fail_run(:'failed_run', 'stopped by the test');

select results_eq(
  format($$select run_id, step_slug, status from pgflow.complete_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 0, 'output', 1),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 0, 'output', 2),
      jsonb_build_object('run_id', %2$L, 'step_slug', 'a', 'task_index', 0, 'output', 3),
      jsonb_build_object('run_id', %3$L, 'step_slug', 'b', 'task_index', 0, 'output', 4),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 5, 'output', 5),
      jsonb_build_object('run_id', gen_random_uuid(), 'step_slug', 'a', 'task_index', 0, 'output', 6)))
    order by run_id = %1$L desc, run_id = %2$L desc$$, :'done_run', :'failed_run', :'queued_run'),
  format($$values (%1$L::uuid, 'a', 'completed'), (%1$L::uuid, 'a', 'completed'),
                  (%2$L::uuid, 'a', 'cancelled'), (%3$L::uuid, 'b', 'queued')$$,
         :'done_run', :'failed_run', :'queued_run'),
  'completed twice (the second unchanged), cancelled and queued rows; nothing for unknown tasks');
select is((select output from pgflow.step_tasks where run_id = :'done_run' and step_slug = 'a'), '1'::jsonb,
          'the first of two identical results wins');
select is((select remaining_tasks from pgflow.step_states where run_id = :'done_run' and step_slug = 'a'), 0,
          'and the step counted it once');
select is((select status from pgflow.step_tasks where run_id = :'failed_run' and step_slug = 'a'), 'cancelled',
          'the late result left the cancelled task as it was');
select is((select status from pgflow.step_tasks where run_id = :'queued_run' and step_slug = 'b'), 'queued',
          'the result for a queued task changed nothing');
select ok((select message_id from pgflow.step_tasks where run_id = :'queued_run' and step_slug = 'b')
            in (select pgflow_tests.queue_msg_ids('f')), 'and its message is still in the queue');
select ok((select message_id from pgflow.step_tasks where run_id = :'done_run' and step_slug = 'a')
            in (select pgflow_tests.queue_msg_ids('f', archived => true)), 'the completed task''s message is archived');

select * from finish();
rollback;
