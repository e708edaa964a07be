-- One batch of failures for three runs: a task with attempts left is queued again with its
-- backoff (message hidden, error kept), an exhausted task fails its step and run (its sibling
-- is cancelled), a result for that cancelled sibling later in the same batch is late (left
-- cancelled), and a result for an unknown task returns nothing. Every run of the batch is
-- locked first (see complete_tasks/locks_runs_in_run_id_order for the order).
begin;
select plan(7);
select pgflow.create_flow('retry', max_attempts => 2, base_delay => 5);
select pgflow.add_step('retry', 'a');
select pgflow.create_flow('once', max_attempts => 1);
select pgflow.add_step('once', 'a');
select pgflow.add_step('once', 'b');
select run_id as retry_run from pgflow.start_flow('retry', '{}') \gset
select run_id as once_run from pgflow.start_flow('once', '{}') \gset
select pgflow_tests.start_task(:'retry_run', 'a');
select pgflow_tests.start_task(:'once_run', 'a');
select pgflow_tests.start_task(:'once_run', 'b');

select clock_timestamp() as t0 \gset
select results_eq(
  format($$select step_slug, status from pgflow.fail_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %2$L, 'step_slug', 'b', 'task_index', 0, 'error_message', 'late'),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'try again'),
      jsonb_build_object('run_id', %2$L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'exhausted'),
      jsonb_build_object('run_id', gen_random_uuid(), 'step_slug', 'a', 'task_index', 0, 'error_message', 'nobody')))
    order by run_id = %1$L desc, step_slug$$, :'retry_run', :'once_run'),
  $$values ('a', 'queued'), ('a', 'failed'), ('b', 'cancelled')$$,
  'queued again, failed, and the late sibling left cancelled; nothing for the unknown task');
select clock_timestamp() as t1 \gset
select results_eq(format($$select status, attempts_count, error_message from pgflow.step_tasks where run_id = %L$$, :'retry_run'),
                  $$values ('queued', 1, 'try again')$$, 'the retried task keeps its attempt and error');
select ok(pgflow_tests.visible_after('a', 'retry', 10, :'t0', :'t1'),
          'its message is hidden for the backoff (5 * 2^1 s)');
select is((select status from pgflow.runs where run_id = :'once_run'), 'failed', 'the exhausted task failed its run');
select results_eq(format($$select step_slug, status, error_message from pgflow.step_tasks where run_id = %L order by step_slug$$, :'once_run'),
                  $$values ('a', 'failed', 'exhausted'), ('b', 'cancelled', null)$$,
                  'the failed task keeps its error, the sibling was cancelled by the run failure, not by the late result');
select results_eq($$select active, archived from pgflow_tests.queue_counts('once')$$, $$values (0::bigint, 2::bigint)$$,
                  'both messages of the failed run are archived');
select is_empty($$select * from pgflow.fail_tasks('[]')$$, 'an empty batch returns nothing');

select * from finish();
rollback;
