-- Out-of-range options fail the named checks and create nothing.
begin;
select plan(4);

select throws_ok($$select pgflow.create_flow('f', max_attempts => -1)$$, '23514',
  'new row for relation "flows" violates check constraint "opt_max_attempts_is_nonnegative"',
  'negative max_attempts');
select throws_ok($$select pgflow.create_flow('f', base_delay => -1)$$, '23514',
  'new row for relation "flows" violates check constraint "opt_base_delay_is_nonnegative"',
  'negative base_delay');
select throws_ok($$select pgflow.create_flow('f', timeout => 0)$$, '23514',
  'new row for relation "flows" violates check constraint "opt_timeout_is_positive"',
  'zero timeout');
select ok(not exists (select 1 from pgmq.list_queues() where queue_name = 'f'),
          'no queue was created');

select * from finish();
rollback;
