-- create_flow inserts the definition and returns the row; since 0002 it creates no PGMQ queue
-- (the compiler and add_step provision lower(flow_slug)).
begin;
select plan(6);

select results_eq(
  $$select flow_slug, opt_max_attempts, opt_base_delay, opt_timeout
    from pgflow.create_flow('test_flow')$$,
  $$values ('test_flow'::text, 3, 5, 60)$$,
  'returns the new flows row');
select results_eq(
  $$select flow_slug from pgflow.flows$$,
  $$values ('test_flow'::text)$$,
  'the flow is stored');
select is((select count(*) from pgmq.meta), 0::bigint, 'no queue was created (no pgmq.meta row)');
select hasnt_table('pgmq', 'q_test_flow', 'no message table');
select hasnt_table('pgmq', 'a_test_flow', 'no archive table');
select is((select created_at from pgflow.flows), now(), 'created_at is the transaction time');

select * from finish();
rollback;
