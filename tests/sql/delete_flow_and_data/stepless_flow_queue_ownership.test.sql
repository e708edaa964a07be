-- A flow without steps owns only the queue created together with it (by the compiler):
-- deleting it drops that queue. A flow created by create_flow alone has no queue; a queue
-- created later by someone else under its name is not the flow's and survives the deletion.
begin;
select plan(5);

select pgflow.ensure_flow_compiled('empty', '{"steps": []}', pgflow.worker_protocol());
select lives_ok($$select pgflow.delete_flow_and_data('empty')$$, 'a compiled stepless flow is deleted');
select is((select count(*) from pgmq.meta where queue_name = 'empty'), 0::bigint, 'with its queue');

select dblink_connect('other', pgflow_tests.dblink_connstr());
select dblink_exec('other', $q$do $d$ begin perform pgflow.create_flow('bare'); end $d$ $q$);
select dblink_exec('other', $q$do $d$ begin perform pgmq.create('bare'); perform pgmq.send('bare', '{"theirs": true}'); end $d$ $q$);
select dblink_disconnect('other');

select lives_ok($$select pgflow.delete_flow_and_data('bare')$$, 'a flow from create_flow alone is deleted');
select is((select count(*) from pgflow.flows where flow_slug = 'bare'), 0::bigint, '(its row is gone)');
select is((pgflow_tests.queue_counts('bare')).active, 1::bigint, 'the foreign queue of the same name is kept with its message');

select * from finish();
rollback;
