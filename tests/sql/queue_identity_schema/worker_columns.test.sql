-- workers.protocol (NOT NULL int: the protocol a worker registered with) and the pause of a
-- worker function (worker_functions.paused_at and pause_reason, both set or both NULL).
begin;
select plan(9);

select has_column('pgflow', 'workers', 'protocol', 'workers.protocol exists');
select col_type_is('pgflow', 'workers', 'protocol', 'integer', 'workers.protocol is an integer');
select col_not_null('pgflow', 'workers', 'protocol', 'workers.protocol is NOT NULL');
select has_column('pgflow', 'worker_functions', 'paused_at', 'worker_functions.paused_at exists');
select col_type_is('pgflow', 'worker_functions', 'paused_at', 'timestamp with time zone', 'paused_at is a timestamptz');
select has_column('pgflow', 'worker_functions', 'pause_reason', 'worker_functions.pause_reason exists');
select col_type_is('pgflow', 'worker_functions', 'pause_reason', 'text', 'pause_reason is text');

insert into pgflow.worker_functions (function_name) values ('fn');
select throws_ok($$update pgflow.worker_functions set paused_at = now()$$, '23514', 'new row for relation "worker_functions" violates check constraint "pause_has_reason"',
                 'a pause without a reason is rejected (pause_has_reason)');
select throws_ok($$update pgflow.worker_functions set pause_reason = 'why'$$, '23514', 'new row for relation "worker_functions" violates check constraint "pause_has_reason"',
                 'a reason without a pause time is rejected');

select * from finish();
rollback;
