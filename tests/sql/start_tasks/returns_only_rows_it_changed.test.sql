-- Upstream returned rows from its snapshot, so two racing claims could both get a task. Ours
-- returns exactly the rows its own UPDATE changed: a claim that waited for a concurrent claim
-- of the same message returns nothing. (Setup is committed through dblink so both sessions see it.)
begin;
select plan(5);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgflow_tests.setup_flow('sequential');
    perform pgflow.start_flow('sequential', '{}');
    perform pgflow_tests.ensure_worker('sequential');
  end $d$ $q$);
  perform dblink_connect('a', pgflow_tests.dblink_connstr());
  perform dblink_connect('b', pgflow_tests.dblink_connstr());
end $$;

-- Session a claims and keeps its transaction (and the task's row lock) open.
select dblink_exec('a', 'begin');
select is((select n from dblink('a', $q$select count(*) from pgflow.start_tasks('sequential', array[1]::bigint[],
                                          '11111111-1111-1111-1111-111111111111')$q$) as t(n bigint)),
          1::bigint, 'the first claim returns the task (its transaction stays open)');

-- Session b's claim of the same message blocks on a's row lock; once a commits it finds the
-- task no longer queued. (b, not this session: our transaction began before the setup, so its
-- now() would precede queued_at.)
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('b', $q$select task_index from pgflow.start_tasks('sequential', array[1]::bigint[],
                                   '11111111-1111-1111-1111-111111111111')$q$);
select ok(pgflow_tests.wait_for_lock(:b_pid), 'the second claim waits for the first one''s row lock');
select dblink_exec('a', 'commit');
select is_empty($$select * from dblink_get_result('b') as t(task_index int)$$, 'the second claim returns nothing');
select * from dblink_get_result('b') as t(task_index int);
select is((select attempts_count from pgflow.step_tasks), 1, 'the task was started once');
select is((select count(*) from dblink('b', 'select 1 from pgflow.step_tasks where attempts_count = 1') as t(x int)),
          1::bigint, '(and b sees that too)');

do $$
begin
  perform dblink_disconnect('a');
  perform dblink_disconnect('b');
  perform dblink_disconnect('setup');
end $$;
select * from finish();
rollback;
