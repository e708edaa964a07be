-- A flow whose queue was dropped by hand is still deleted.
begin;
select plan(2);

select pgflow_tests.setup_flow('sequential');
select pgmq.drop_queue('sequential');
select lives_ok($$select pgflow.delete_flow_and_data('sequential')$$, 'no error without a queue');
select is((select count(*) from pgflow.flows), 0::bigint, 'the flow is gone');

select * from finish();
rollback;
