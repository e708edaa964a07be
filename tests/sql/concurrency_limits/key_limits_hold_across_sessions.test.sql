-- A key limit holds across sessions: two transactions that each queue a task of one key value
-- while the value has one free slot admit one between them (the second counts after the first
-- commits, on the flow's gate row). Key value rows are written only under the gate row: stall
-- recovery's sweep skips a flow another transaction is admitting instead of waiting for it,
-- and a value that went idle comes back with the commit that queues its next task. (Commits
-- for real: this file runs in its own database.)
select pgflow.ensure_flow_compiled('tenants', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('work'))),
                                   pgflow.worker_protocol(), 'flow', null, null,
                                   '{"concurrencyLimit": 4, "concurrencyKey": {"path": ["tenant"], "limit": 1}}')->>'status';

begin;
select plan(10);
create function pg_temp.admitted() returns text language sql as $$
  select coalesce(string_agg(k || ':' || n, ' ' order by k), '')
  from (select concurrency_key as k, count(*) as n from pgflow.step_tasks
        where flow_slug = 'tenants' and gate = 'admitted' and status in ('queued', 'started') group by 1) x
$$;

select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select dblink_exec('a', 'begin');
select * from dblink('a', $$select pgflow.start_run('tenants', '{"tenant": "t1"}')::text$$) as t(x text);
select dblink_exec('a', 'set constraints all immediate');
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('b', 'begin');
select * from dblink('b', $$select pgflow.start_run('tenants', '{"tenant": "t1"}')::text$$) as t(x text);
select dblink_send_query('b', 'commit');
select ok(pgflow_tests.wait_for_lock(:b_pid), 'b''s admission waits for a''s on the gate row');
select dblink_exec('a', 'commit');
select * from dblink_get_result('b', false) as t(x text);
select * from dblink_get_result('b', false) as t(x text);
select is(pg_temp.admitted(), 't1:1', 'having counted a''s admission, b''s task of t1 waits: the key limit holds');
select is((select count(*) from pgflow.step_tasks where flow_slug = 'tenants' and gate = 'held'), 1::bigint,
          'one task held');

-- t4 was served once and went idle (nothing left). An admission in a (immediate constraints:
-- it runs now and keeps its locks) activates t4 again and serves it; b's sweep, which deletes
-- idle values (t4, as b sees it), skips the flow a is admitting instead of waiting for a.
select * from dblink('b', $$select pgflow.start_run('tenants', '{"tenant": "t4"}')::text$$) as t(x text);
select * from dblink('b', $$select pgflow.cancel_run(run_id)::text from pgflow.step_tasks
                            where flow_slug = 'tenants' and concurrency_key = 't4'$$) as t(x text);
select is((select pass from pgflow.concurrency_keys where flow_slug = 'tenants' and key = 't4'), null,
          't4 went idle when the admission found nothing of it waiting');
select dblink_exec('a', 'begin');
select dblink_exec('a', 'set constraints all immediate');
select * from dblink('a', $$select pgflow.start_run('tenants', '{"tenant": "t4"}')::text$$) as t(x text);
select dblink_exec('b', 'set statement_timeout = ''60s''');
select is((select x from dblink('b', 'select pgflow.requeue_stalled_tasks()::text') as t(x text)), '0',
          'the sweep does not wait for the gate row a holds');
select dblink_exec('a', 'commit');
select is((select pass is not null from pgflow.concurrency_keys where flow_slug = 'tenants' and key = 't4'), true,
          'so t4 survives, active again');
select is(pg_temp.admitted(), 't1:1 t4:1', 't4''s new task holds a slot; t1''s second still waits at its cap');

-- A commit under REPEATABLE READ admits nothing, nor activates its value: the sweep does both.
select dblink_exec('b', 'begin isolation level repeatable read');
select * from dblink('b', $$select pgflow.start_run('tenants', '{"tenant": "t9"}')::text$$) as t(x text);
select dblink_exec('b', 'commit');
select is((select count(*) from pgflow.concurrency_keys where flow_slug = 'tenants' and key = 't9'), 0::bigint,
          'a keyed start committed under REPEATABLE READ activates nothing');
select * from dblink('b', 'select pgflow.requeue_stalled_tasks()::text') as t(x text);
select is((select pass is not null from pgflow.concurrency_keys where flow_slug = 'tenants' and key = 't9'), true,
          'stall recovery''s sweep finds the waiting value and activates it');
select is(pg_temp.admitted(), 't1:1 t4:1 t9:1', 'and admits its task');

select dblink_disconnect('a');
select dblink_disconnect('b');
select * from finish();
rollback;
