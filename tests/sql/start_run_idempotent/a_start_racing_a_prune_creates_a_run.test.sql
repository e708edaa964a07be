-- A repeat start whose key's run is being deleted when it reads the key (a prune, not yet
-- committed) waits for the deletion, and when it commits creates a run of its own instead of
-- returning the deleted run (since 0029; before, it returned a run that was gone a moment
-- later). When the deletion rolls back, it returns the run. (Commits for real: this file runs
-- in its own database.)
select pgflow_tests.setup_flow('sequential');
select run_id as pruned_run from pgflow.start_run_idempotent('sequential', '{}', 'prune-1') \gset
select run_id as kept_run from pgflow.start_run_idempotent('sequential', '{}', 'prune-2') \gset
select run_id as rr_run from pgflow.start_run_idempotent('sequential', '{}', 'prune-3') \gset

begin;
select plan(11);
select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('p', pgflow_tests.dblink_connstr());
select pid as a_pid from dblink('a', 'select pg_backend_pid()') as t(pid int) \gset
-- The prune's deletes (sql/contrib/prune_data_older_than.sql deletes in this order; the key
-- goes with its run).
create function pg_temp.delete_run(p_run uuid) returns text language sql as $$
  select format('begin; delete from pgflow.step_tasks where run_id = %1$L; '
                'delete from pgflow.step_states where run_id = %1$L; '
                'delete from pgflow.runs where run_id = %1$L', p_run) $$;

select dblink_exec('p', pg_temp.delete_run(:'pruned_run'));
select dblink_send_query('a', $$select row(s.run_id, s.created)::text from pgflow.start_run_idempotent('sequential', '{}', 'prune-1') s$$);
select ok(pgflow_tests.wait_for_lock(:a_pid), 'a repeat start waits for the deletion of its key''s run');
select dblink_exec('p', 'commit');
select x as result from dblink_get_result('a', false) as t(x text) \gset
select * from dblink_get_result('a', false) as t(x text);
select ok(:'result' like '%,t)', 'once the deletion commits, the start creates a run');
select isnt(split_part(trim(both '()' from :'result'), ',', 1)::uuid, :'pruned_run'::uuid, 'not the deleted run');
select is((select count(*) from pgflow.runs r join pgflow.run_idempotency_keys k using (run_id)
           where k.idempotency_key = 'prune-1'), 1::bigint, 'the new run holds the key');

select dblink_exec('p', pg_temp.delete_run(:'kept_run'));
select dblink_send_query('a', $$select row(s.run_id, s.created)::text from pgflow.start_run_idempotent('sequential', '{}', 'prune-2') s$$);
select ok(pgflow_tests.wait_for_lock(:a_pid), 'it waits again');
select dblink_exec('p', 'rollback');
select is((select x from dblink_get_result('a', false) as t(x text)), format('(%s,f)', :'kept_run'),
          'a deletion that rolls back leaves the run, which the start returns');
select * from dblink_get_result('a', false) as t(x text);

-- A repeat in an open transaction holds nothing: what changes a run's state (a worker's
-- result, a cancellation: the run FOR UPDATE) and a prune (the key row deleted with its run)
-- do not wait for it.
select dblink_exec('a', 'begin');
select is((select x from dblink('a', $$select created::text from pgflow.start_run_idempotent('sequential', '{}', 'prune-2')$$) as t(x text)),
          'false', '(a repeat, in an open transaction)');
select lives_ok(format('select * from dblink(%L, %L) as t(x int)', 'p',
                       format('select 1 from pgflow.runs where run_id = %L for update nowait', :'kept_run')),
                'a repeat in an open transaction does not hold its run');
select lives_ok(format('select * from dblink(%L, %L) as t(x int)', 'p',
                       'select 1 from pgflow.run_idempotency_keys where idempotency_key = ''prune-2'' for update nowait'),
                'nor its key');
select dblink_exec('a', 'rollback');

-- The key row now carries the lock just taken in its xmax (as a rolled-back deletion leaves
-- one): a set xmax that is no deletion in progress still answers repeats.
select is((select created from pgflow.start_run_idempotent('sequential', '{}', 'prune-2')), false,
          'a key row with a set xmax and no deletion in progress still answers repeats');

-- REPEATABLE READ: a deletion committed after the snapshot is a serialization failure (the
-- snapshot still holds the old key row), never a second key beside it.
select dblink_exec('a', 'begin isolation level repeatable read');
select * from dblink('a', 'select 1::text') as t(x text);  -- takes the snapshot
select dblink_exec('p', pg_temp.delete_run(:'rr_run'));
select dblink_exec('p', 'commit');
select dblink_send_query('a', $$select created::text from pgflow.start_run_idempotent('sequential', '{}', 'prune-3')$$);
select * from dblink_get_result('a', false) as t(x text);
select ok(dblink_error_message('a') like '%deleted after this transaction''s snapshot%',
          'under REPEATABLE READ, a deletion committed after the snapshot is a serialization failure');
select * from dblink_get_result('a', false) as t(x text);
select dblink_exec('a', 'rollback');

select dblink_disconnect('a');
select dblink_disconnect('p');
select * from finish();
rollback;
