-- A worker start's verification does not read pgflow.step_tasks (since 0029): step_tasks has no
-- index for "another flow's tasks in this queue", so the verification read the whole task
-- history under the flow's locks, once per queue, at every worker start. Creating a flow still
-- asks (queue_provisioning/rejects_queue_used_by_another_flow).
begin;
select plan(5);

select pgflow_tests.deploy('plainFlow', null);
select pgflow.start_flow('plainFlow', '{}');
select pgflow_tests.deploy('stepFlow', null, jsonb_build_array(
  pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first'])), 'step');
select pgflow.start_flow('stepFlow', '{}');

-- Scans of step_tasks by this transaction so far.
create function pg_temp.task_reads() returns bigint language sql as $$
  select seq_scan + coalesce(idx_scan, 0) from pg_stat_xact_user_tables
  where relid = 'pgflow.step_tasks'::regclass $$;

-- The control: a read of step_tasks counts.
select pg_temp.task_reads() as before \gset
select count(*) from pgflow.step_tasks;
select cmp_ok(pg_temp.task_reads(), '>', :'before'::bigint, 'control: a read of step_tasks is counted');

select pg_temp.task_reads() as before \gset
select is(pgflow_tests.deploy('plainFlow', null)->>'status', 'verified', '(the plain flow is verified)');
select is(pg_temp.task_reads(), :'before'::bigint, 'verifying a plain flow reads no task');
select pg_temp.task_reads() as before \gset
select is(pgflow_tests.deploy('stepFlow', null, jsonb_build_array(
            pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first'])), 'step')->>'status',
          'verified', '(the step-queued flow is verified)');
select is(pg_temp.task_reads(), :'before'::bigint, 'verifying a step-queued flow reads no task');

select * from finish();
rollback;
