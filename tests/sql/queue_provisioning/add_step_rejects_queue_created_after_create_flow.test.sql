-- A queue created by someone else after create_flow (in another transaction) is not the
-- flow's: add_step and the compiler refuse to adopt it, and it stays untouched.
begin;
select plan(5);

-- Two committed transactions: the flow, then a foreign queue with its generated name.
select dblink_connect('other', pgflow_tests.dblink_connstr());
select dblink_exec('other', $q$do $d$ begin perform pgflow.create_flow('late'); end $d$ $q$);
select dblink_exec('other', $q$do $d$ begin perform pgmq.create('late'); perform pgmq.send('late', '{"foreign": true}'); end $d$ $q$);
select dblink_disconnect('other');

select throws_ok($$select pgflow.add_step('late', 'a')$$, '42710',
  'PGMQ queue "late" already exists but flow "late" did not create it; pgflow never adopts an existing queue. Drop or rename that queue, or use another flow slug',
  'add_step refuses the foreign queue');
select throws_ok($$select pgflow.ensure_flow_compiled('late', '{"steps": []}', pgflow.worker_protocol())$$, '42710', 'PGMQ queue "late" already exists but flow "late" did not create it; pgflow never adopts an existing queue. Drop or rename that queue, or use another flow slug',
  'verifying the (stepless) flow refuses it too');
select is((select count(*) from pgflow.steps), 0::bigint, 'no step was added');
select is((pgflow_tests.queue_counts('late')).active, 1::bigint, 'the foreign queue keeps its message');
select is((select count(*) from pgmq.meta where lower(queue_name) = 'late'), 1::bigint, 'and its single meta row');

select * from finish();
rollback;
