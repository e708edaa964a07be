-- Calling create_flow again returns the existing row unchanged (options are never updated)
-- and leaves the flow's queue (provisioned by add_step) and its messages alone.
begin;
select plan(5);

select pgflow.create_flow('again', max_attempts => 2, base_delay => 1, timeout => 10);
select pgflow.add_step('again', 's');
select pgmq.send('again', '{"keep": true}');

select results_eq(
  $$select flow_slug, opt_max_attempts, opt_base_delay, opt_timeout
    from pgflow.create_flow('again', max_attempts => 9, base_delay => 9, timeout => 99)$$,
  $$values ('again'::text, 2, 1, 10)$$,
  'a second call returns the existing row');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows$$,
  $$values (2, 1, 10)$$,
  'the stored options are unchanged');
select is((select count(*) from pgflow.flows), 1::bigint, 'still one flow');
select is((select count(*) from pgmq.list_queues() where queue_name = 'again'), 1::bigint,
          'still one queue');
select is((pgflow_tests.queue_counts('again')).active, 1::bigint,
          'the queue was not recreated: its message is still there');

select * from finish();
rollback;
