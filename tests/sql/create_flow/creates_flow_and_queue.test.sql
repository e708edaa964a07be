-- create_flow inserts the definition, creates the PGMQ queue named by the slug and returns the row.
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
select ok(exists (select 1 from pgmq.list_queues() where queue_name = 'test_flow'),
          'a queue named by the flow slug exists');
select has_table('pgmq', 'q_test_flow', 'its message table exists');
select has_table('pgmq', 'a_test_flow', 'its archive table exists');
select is((select created_at from pgflow.flows), now(), 'created_at is the transaction time');

select * from finish();
rollback;
