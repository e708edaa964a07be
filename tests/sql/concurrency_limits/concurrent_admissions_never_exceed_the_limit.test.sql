-- Admissions of one flow queue on its gate row: two transactions that each queue a task while
-- one slot is free admit one task between them, not two (the second counts after the first
-- commits). A commit under REPEATABLE READ admits nothing, nor can an admission take a task
-- another transaction holds locked; stall recovery's sweep admits what they left.
-- (Commits for real: this file runs in its own database.)
select pgflow.ensure_flow_compiled('duo', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('work'))),
                                   pgflow.worker_protocol(), 'flow', null, null, '{"concurrencyLimit": 2}')->>'status';
select pgflow.start_run('duo', '{"n": 0}');

begin;
select plan(10);
create function pg_temp.gates() returns text language sql as $$
  select format('admitted %s, held %s',
    (select count(*) from pgflow.step_tasks where flow_slug = 'duo' and gate = 'admitted' and status in ('queued', 'started')),
    (select count(*) from pgflow.step_tasks where flow_slug = 'duo' and gate = 'held' and status = 'queued'))
$$;
select is(pg_temp.gates(), 'admitted 1, held 0', 'one of two slots is taken');

select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
-- a admits its task now (its admission runs at the statement's end) and holds the gate row.
select dblink_exec('a', 'begin');
select * from dblink('a', $$select pgflow.start_run('duo', '{"n": 1}')::text$$) as t(x text);
select dblink_exec('a', 'set constraints all immediate');
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('b', 'begin');
select * from dblink('b', $$select pgflow.start_run('duo', '{"n": 2}')::text$$) as t(x text);
select dblink_send_query('b', 'commit');
select ok(pgflow_tests.wait_for_lock(:b_pid), 'b''s admission waits for a''s');
select dblink_exec('a', 'commit');
select * from dblink_get_result('b', false) as t(x text);
select is(dblink_error_message('b'), 'OK', 'then b commits');
select * from dblink_get_result('b', false) as t(x text);
select is(pg_temp.gates(), 'admitted 2, held 1', 'having counted a''s admission: two admitted, b''s task waits');
select is((select count(*) from pgmq.q_duo where vt <= clock_timestamp()), 2::bigint, 'two messages are visible');

-- REPEATABLE READ: a commit that frees a slot admits nothing (its snapshot could miss a newer
-- admission): stall recovery's sweep does.
select run_id as first_run from pgflow.runs where input = '{"n": 0}' \gset
select dblink_exec('b', 'begin isolation level repeatable read');
select * from dblink('b', format($$select pgflow.cancel_run(%L)::text$$, :'first_run')) as t(x text);
select is(dblink_exec('b', 'commit'), 'COMMIT', 'under REPEATABLE READ the commit succeeds');
select is(pg_temp.gates(), 'admitted 1, held 1', 'but admits nothing: a slot is free and a task waits');
select * from dblink('b', 'select pgflow.requeue_stalled_tasks()::text') as t(x text);
select is(pg_temp.gates(), 'admitted 2, held 0', 'stall recovery''s sweep admits it');

-- An admission skips a held task another transaction has locked; if that one rolls back, the
-- sweep admits the task.
select * from dblink('b', $$select pgflow.start_run('duo', '{"n": 4}')::text$$) as t(x text);
select run_id as second_run from pgflow.runs where input = '{"n": 1}' \gset
select dblink_exec('a', 'begin');
select * from dblink('a', $$select count(*)::text from (select 1 from pgflow.step_tasks t join pgflow.runs r using (run_id)
                                                         where r.input = '{"n": 4}' for update of t) x$$) as t(x text);
select * from dblink('b', format($$select pgflow.cancel_run(%L)::text$$, :'second_run')) as t(x text);
select is(pg_temp.gates(), 'admitted 1, held 1', 'the admission at the cancellation''s commit skipped the locked task');
select dblink_exec('a', 'rollback');
select * from dblink('b', 'select pgflow.requeue_stalled_tasks()::text') as t(x text);
select is(pg_temp.gates(), 'admitted 2, held 0', 'and the sweep admits it once the lock is gone');

select * from finish();
rollback;
