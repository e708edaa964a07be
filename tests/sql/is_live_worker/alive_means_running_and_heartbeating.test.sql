-- A live worker has not stopped, is not deprecated and sent a heartbeat within 30 seconds: the
-- one rule the CLI and the documented queries count live workers with.
begin;
select plan(6);

select pgflow_tests.ensure_worker('live_flow');  -- one registered worker
create temp table w as select * from pgflow.workers limit 0;
insert into w (worker_id, queue_name, function_name, started_at, last_heartbeat_at, protocol)
values (gen_random_uuid(), 'q', 'f', now(), now() - interval '29 seconds', 5);

select is((select pgflow.is_live_worker(row(w.*)::pgflow.workers) from w), true, 'a heartbeat 29 s ago: live');
update w set last_heartbeat_at = now() - interval '30 seconds';
select is((select pgflow.is_live_worker(row(w.*)::pgflow.workers) from w), false, '30 s without a heartbeat: not live');
update w set last_heartbeat_at = now();
select is((select pgflow.is_live_worker(row(w.*)::pgflow.workers) from w), true, '(a fresh heartbeat: live again)');
update w set deprecated_at = now();
select is((select pgflow.is_live_worker(row(w.*)::pgflow.workers) from w), false, 'deprecated: not live (it drains)');
update w set deprecated_at = null, stopped_at = now();
select is((select pgflow.is_live_worker(row(w.*)::pgflow.workers) from w), false, 'stopped: not live');
select is((select count(*) from pgflow.workers w where pgflow.is_live_worker(w)), 1::bigint,
          'works on pgflow.workers rows (the registered worker is live)');

select * from finish();
rollback;
