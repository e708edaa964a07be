-- Upstream returned rows from its snapshot, so two racing claims could both get a task. Ours
-- returns exactly the rows its own UPDATE changed: a claim that waited for a concurrent claim
-- of the same message returns nothing. (Setup is committed through dblink so both sessions see it.)
begin;
select plan(4);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgflow_tests.setup_flow('sequential');
    perform pgflow.start_flow('sequential', '{}');
    perform pgflow_tests.ensure_worker('sequential');
  end $d$ $q$);
  perform dblink_connect('a', pgflow_tests.dblink_connstr());
  -- Session a claims, then keeps its transaction (and the task's row lock) open for a moment.
  perform dblink_exec('a', $q$create function pg_temp.claim_and_hold() returns bigint language plpgsql as $f$
    declare n bigint;
    begin
      select count(*) into n from pgflow.start_tasks('sequential', array[1]::bigint[], '11111111-1111-1111-1111-111111111111');
      perform pg_sleep(1);
      return n;
    end $f$ $q$);
end $$;
select pid as a_pid from dblink('a', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('a', 'select pg_temp.claim_and_hold()');
select ok(pgflow_tests.wait_for_pg_sleep(:a_pid), '(session a has claimed and holds its transaction open)');

-- Session b's claim blocks on a's row lock, then finds the task no longer queued. (b, not this
-- session: our transaction began before the setup, so its now() would precede queued_at.)
select dblink_connect('b', pgflow_tests.dblink_connstr());
select is_empty($$select * from dblink('b', 'select task_index from pgflow.start_tasks(''sequential'', array[1]::bigint[], ''11111111-1111-1111-1111-111111111111'')')
                  as t(task_index int)$$,
                'the second claim returns nothing');
select is((select n from dblink_get_result('a') as t(n bigint)), 1::bigint, 'the first claim returned the task');
select is((select attempts_count from pgflow.step_tasks), 1, 'the task was started once');

do $$
begin
  perform * from dblink_get_result('a') as t(n bigint);
  perform dblink_disconnect('a');
  perform dblink_disconnect('b');
  perform dblink_disconnect('setup');
end $$;
select * from finish();
rollback;
