-- Definition rows get created_at = the transaction time.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select is((select created_at from pgflow.flows), now(), 'flows.created_at');
select ok((select bool_and(created_at = now()) from pgflow.steps), 'steps.created_at');
select ok((select bool_and(created_at = now()) from pgflow.deps), 'deps.created_at');

select * from finish();
rollback;
