-- A flow without steps created by create_flow alone (no queue) and compiled later by a worker
-- with an empty shape gets its queue at verification, and that queue stays its own: later
-- verifications in other transactions pass, and deleting the flow drops it.
begin;
select plan(5);

select dblink_connect('w', pgflow_tests.dblink_connstr());
select dblink_exec('w', $q$do $d$ begin perform pgflow.create_flow('later'); end $d$ $q$);
select is((select x from dblink('w', $q$select pgflow.ensure_flow_compiled('later', '{"steps": []}', pgflow.worker_protocol())->>'status'$q$) as t(x text)),
          'verified', 'a later transaction verifies the flow and provisions its queue');
select is((select x from dblink('w', $q$select pgflow.ensure_flow_compiled('later', '{"steps": []}', pgflow.worker_protocol())->>'status'$q$) as t(x text)),
          'verified', 'a third transaction still verifies it');
select dblink_disconnect('w');
select is((select count(*) from pgmq.meta where queue_name = 'later'), 1::bigint, '(one queue)');

select lives_ok($$select pgflow.delete_flow_and_data('later')$$, 'the flow is deleted');
select is((select count(*) from pgmq.meta where queue_name = 'later'), 0::bigint, 'with its queue');

select * from finish();
rollback;
