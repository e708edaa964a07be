-- Two sessions start with one key at the same time: the second waits on the first's key,
-- then returns the first's run (not created) once that commits, or creates its own if the
-- first rolled back. Under REPEATABLE READ a key committed after the snapshot is a
-- serialization failure (40001, retry), never a second run. (Commits for real: this file runs
-- in its own database.)
select pgflow_tests.setup_flow('sequential');

begin;
select plan(7);

select a_result, b_result, coalesce(b_error, 'none') as b_error from pgflow_tests.race(
  $$select row(s.run_id, s.created)::text from pgflow.start_run_idempotent('sequential', '{"by": "a"}', 'race-1') s$$,
  $$select row(s.run_id, s.created)::text from pgflow.start_run_idempotent('sequential', '{"by": "b"}', 'race-1') s$$)
  \gset
select is(:'b_error'::text, 'none', 'the waiting start succeeds');
select is(:'b_result'::text, replace(:'a_result'::text, ',t)', ',f)'), 'returning the first run, not created');
select is((select count(*) from pgflow.runs where input->>'by' in ('a', 'b')), 1::bigint, 'one run exists');

-- The first start rolls back: the waiting one creates the run.
select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select dblink_exec('a', 'begin');
select * from dblink('a', $$select created::text from pgflow.start_run_idempotent('sequential', '{"by": "a"}', 'race-2')$$) as t(x text);
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('b', $$select created::text from pgflow.start_run_idempotent('sequential', '{"by": "b"}', 'race-2')$$);
select ok(pgflow_tests.wait_for_lock(:b_pid), 'a second start waits for the first''s key');
select dblink_exec('a', 'rollback');
select is((select x from dblink_get_result('b', false) as t(x text)), 'true',
          'when the first rolls back, the second creates the run');
select * from dblink_get_result('b', false) as t(x text);

-- REPEATABLE READ: session b's snapshot predates a's committed key.
select dblink_exec('b', 'begin isolation level repeatable read');
select * from dblink('b', 'select 1::text') as t(x text);  -- takes the snapshot
select * from dblink('a', $$select created::text from pgflow.start_run_idempotent('sequential', '{}', 'race-3')$$) as t(x text);
select dblink_send_query('b', $$select created::text from pgflow.start_run_idempotent('sequential', '{}', 'race-3')$$);
select * from dblink_get_result('b', false) as t(x text);
select ok(dblink_error_message('b') like '%could not serialize access%',
          'under REPEATABLE READ, a key committed after the snapshot is a serialization failure');
select * from dblink_get_result('b', false) as t(x text);
select dblink_exec('b', 'rollback');
select is((select count(*) from pgflow.run_idempotency_keys k join pgflow.runs r using (run_id)
           where k.idempotency_key in ('race-1', 'race-2', 'race-3')), 3::bigint,
          'one run per key, each with its key');
select dblink_disconnect('a');
select dblink_disconnect('b');

select * from finish();
rollback;
