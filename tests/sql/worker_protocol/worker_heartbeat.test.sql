-- worker_heartbeat records a heartbeat and returns whether the worker was deprecated (it
-- should stop polling and drain); an unknown worker gets NULL.
begin;
select plan(5);

select pgflow.ensure_flow_compiled('f', '{"steps": []}', pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
update pgflow.workers set last_heartbeat_at = now() - interval '1 hour';

select is(pgflow.worker_heartbeat('11111111-1111-1111-1111-111111111111'), false, 'a live worker: not deprecated');
select ok((select last_heartbeat_at > now() from pgflow.workers), 'the heartbeat time is the call time');
update pgflow.workers set deprecated_at = now();
select is(pgflow.worker_heartbeat('11111111-1111-1111-1111-111111111111'), true, 'a deprecated worker is told so');
select is(pgflow.worker_heartbeat('99999999-9999-9999-9999-999999999999'), null, 'an unknown worker gets NULL');
select is((select count(*) from pgflow.workers), 1::bigint, '(and no row is created for it)');

select * from finish();
rollback;
