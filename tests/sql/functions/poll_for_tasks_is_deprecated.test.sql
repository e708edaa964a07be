-- poll_for_tasks (deprecated since 0.3.0) only raises a NOTICE and returns nothing, even with work queued.
begin;
select plan(2);

select pgflow_tests.setup_flow('sequential');
select pgflow.start_flow('sequential', '{}');
select is_empty($$select * from pgflow.poll_for_tasks('sequential', 1, 10)$$, 'returns no rows');
select is((select status from pgflow.step_tasks), 'queued', 'claims nothing');

select * from finish();
rollback;
