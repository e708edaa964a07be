-- A failure marked "permanent" (schema 0014, worker protocol 6: a conversion failure or a
-- handler's pgflow::permanent) is the task's last attempt whatever attempts remain: the step
-- ends as its when_exhausted mode says (here: the run fails; with skip: the step is skipped and
-- the run goes on), and the error message says it was not retried. A failure without it, or
-- with "permanent": false, is retried as before. A "permanent" that is not a boolean is refused
-- and changes nothing.
begin;
select plan(9);
select pgflow.create_flow('perm', max_attempts => 5, base_delay => 1);
select pgflow.add_step('perm', 'a');
select pgflow.create_flow('skipper', max_attempts => 5);
select pgflow.add_step('skipper', 'a', when_exhausted => 'skip');
select pgflow.add_step('skipper', 'b', array['a']);
select run_id as perm_run from pgflow.start_flow('perm', '{}') \gset
select run_id as retry_run from pgflow.start_flow('perm', '{}') \gset
select run_id as skip_run from pgflow.start_flow('skipper', '{}') \gset
select pgflow_tests.start_task(:'perm_run', 'a');
select pgflow_tests.start_task(:'retry_run', 'a');
select pgflow_tests.start_task(:'skip_run', 'a');

select throws_ok(
  format($$select * from pgflow.fail_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'x', 'permanent', 'yes')))$$,
    :'perm_run'),
  '22023', 'fail_tasks(): result 1: "permanent" must be true or false',
  'a "permanent" that is not a boolean is refused, naming the result');
select is((select status from pgflow.step_tasks where run_id = :'perm_run'), 'started', 'and changes nothing');

select results_eq(
  format($$select run_id, status from pgflow.fail_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'no such customer', 'permanent', true),
      jsonb_build_object('run_id', %2$L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'flaky', 'permanent', false),
      jsonb_build_object('run_id', %3$L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'bad input', 'permanent', true)))
    order by status, run_id = %1$L desc$$, :'perm_run', :'retry_run', :'skip_run'),
  format($$values (%1$L::uuid, 'failed'), (%3$L::uuid, 'failed'), (%2$L::uuid, 'queued')$$, :'perm_run', :'retry_run', :'skip_run'),
  'permanent failures fail their tasks on the first of five attempts; "permanent": false is retried');
select results_eq(format($$select attempts_count, error_message from pgflow.step_tasks where run_id = %L$$, :'perm_run'),
                  $$values (1, 'no such customer (permanent: not retried)')$$,
                  'the task failed after one attempt and its error says why it was not retried');
select results_eq(format($$select r.status, ss.status, ss.error_message from pgflow.runs r
                            join pgflow.step_states ss using (run_id) where r.run_id = %L$$, :'perm_run'),
                  $$values ('failed', 'failed', 'no such customer (permanent: not retried)')$$,
                  'with when_exhausted fail, the step and the run fail as usual, with that message');
select is((select status from pgflow.runs where run_id = :'retry_run'), 'started', 'the retried run goes on');
select results_eq(format($$select step_slug, status, skip_reason from pgflow.step_states where run_id = %L order by step_slug$$, :'skip_run'),
                  $$values ('a', 'skipped', 'handler_failed'), ('b', 'started', null)$$,
                  'with when_exhausted skip, the step is skipped at once and its dependent starts');
-- The retried task's second attempt (claimed again), failed with "permanent": null.
select is((select count(*)::int from pgflow_tests.start_task(:'retry_run', 'a')), 1, 'the retried task is claimed again');
select results_eq(
  format($$select status, error_message from pgflow.fail_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %L, 'step_slug', 'a', 'task_index', 0, 'error_message', 'again', 'permanent', null)))$$,
    :'retry_run'),
  $$values ('queued', 'again')$$,
  'a JSON null "permanent" is not permanent: the second of five attempts is retried too');
select * from finish();
rollback;
