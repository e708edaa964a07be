-- The optional pruning helper (sql/contrib/prune_data_older_than.sql) never deletes a worker that
-- beat within pgflow.is_live_worker's 30 seconds, whatever the retention: before 0027's copy,
-- `pgflow prune --older-than 1s` unregistered a running fleet (their running tasks lost
-- last_worker_id). A deprecated worker that still beats is kept too; silent workers older than
-- both the cutoff and the window are deleted.
begin;
select plan(6);
\i ../../../sql/contrib/prune_data_older_than.sql

select pgflow.create_flow('f');
select pgflow.add_step('f', 's');
insert into pgflow.workers (worker_id, queue_name, function_name, protocol, last_heartbeat_at, deprecated_at)
values ('11111111-1111-1111-1111-111111111111', 'f', 'fn', pgflow.worker_protocol(), now() - interval '5 seconds', null),
       ('22222222-2222-2222-2222-222222222222', 'f', 'fn', pgflow.worker_protocol(), now() - interval '20 seconds', now()),
       ('33333333-3333-3333-3333-333333333333', 'f', 'fn', pgflow.worker_protocol(), now() - interval '2 minutes', null),
       ('44444444-4444-4444-4444-444444444444', 'f', 'fn', pgflow.worker_protocol(), now() - interval '10 days', null);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select count(*) from pgflow.claim_tasks('f', 'f', array(select message_id from pgflow.step_tasks),
                                        '11111111-1111-1111-1111-111111111111');

select pgflow.prune_data_older_than(null);
select is((select count(*) from pgflow.workers), 4::bigint, 'a NULL retention deletes no worker');

select pgflow.prune_data_older_than('7 days');
select is(array(select worker_id::text from pgflow.workers order by worker_id),
          array['11111111-1111-1111-1111-111111111111', '22222222-2222-2222-2222-222222222222',
                '33333333-3333-3333-3333-333333333333'],
          'a retention of 7 days deletes the worker silent for 10 days');

select pgflow.prune_data_older_than('1 second');
select is(array(select worker_id::text from pgflow.workers order by worker_id),
          array['11111111-1111-1111-1111-111111111111', '22222222-2222-2222-2222-222222222222'],
          'a retention of 1 s keeps the workers that beat within 30 s, and deletes the one silent for 2 minutes');
select is((select deprecated_at is not null from pgflow.workers where worker_id = '22222222-2222-2222-2222-222222222222'),
          true, 'the kept ones include a deprecated worker that still beats');
select is((select last_worker_id from pgflow.step_tasks where run_id = :'run'),
          '11111111-1111-1111-1111-111111111111'::uuid, 'the running task keeps its worker');

select pgflow.prune_data_older_than('0 seconds');
select is((select count(*) from pgflow.workers), 2::bigint, 'even a retention of 0 keeps them');

select * from finish();
rollback;
