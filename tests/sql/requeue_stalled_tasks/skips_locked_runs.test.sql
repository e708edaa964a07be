-- Stall recovery takes run locks with SKIP LOCKED: a run busy in another transaction is skipped
-- (not waited for) and recovered by a later call. (Setup is committed through dblink.)
begin;
select plan(4);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgflow_tests.setup_flow('sequential');
    perform pgflow.start_flow('sequential', '{}');
    perform pgflow_tests.read_and_start('sequential', 60);
    update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';
  end $d$ $q$);
  perform dblink_connect('busy', pgflow_tests.dblink_connstr());
  perform dblink_exec('busy', 'begin');
end $$;
select count(*) from dblink('busy', 'select 1 from pgflow.runs for update') as t(x int);

select is(pgflow.requeue_stalled_tasks(), 0, 'the locked run is skipped without waiting');
select is((select status from pgflow.step_tasks), 'started', 'its task is still started');
select dblink_exec('busy', 'rollback');
select is(pgflow.requeue_stalled_tasks(), 1, 'once the lock is released the task is requeued');
select is((select status from pgflow.step_tasks), 'queued', 'its task is queued');

do $$
begin
  perform dblink_disconnect('busy');
  perform dblink_disconnect('setup');
end $$;
select * from finish();
rollback;
