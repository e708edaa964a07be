-- Other flows, their runs and their queues are not touched; the slug can be reused afterwards.
begin;
select plan(4);

select pgflow_tests.setup_flow('sequential');
select pgflow_tests.setup_flow('sequential_other');
select pgflow.start_flow('sequential', '{}');
select pgflow.start_flow('other', '{}');

select pgflow.delete_flow_and_data('sequential');
select is((select count(*) from pgflow.steps where flow_slug = 'other'), 3::bigint, 'the other flow keeps its steps');
select is((select count(*) from pgflow.runs where flow_slug = 'other'), 1::bigint, 'and its run');
select is((pgflow_tests.queue_counts('other')).active, 1::bigint, 'and its queued message');
select lives_ok($$select pgflow_tests.setup_flow('sequential')$$, 'the deleted slug can be created again');

select * from finish();
rollback;
