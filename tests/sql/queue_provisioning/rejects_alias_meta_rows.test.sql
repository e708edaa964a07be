-- Distinct pgmq.meta rows "Orders" and "orders" address the same tables (aliases): the
-- generated queue is then ambiguous, and the compiler, add_step and create_flow refuse.
begin;
select plan(7);

select pgflow.ensure_flow_compiled('orders', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                   pgflow.worker_protocol());
select pgmq.create('Orders');  -- an alias row for the same tables
select is((select count(*) from pgmq.meta where lower(queue_name) = 'orders'), 2::bigint, '(two meta rows for one queue)');

select throws_ok($$select pgflow.ensure_flow_compiled('orders', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                                       pgflow.worker_protocol())$$,
  '21000', 'PGMQ queue "orders" is ambiguous: pgmq.meta has 2 rows for the same tables (Orders, orders); keep one',
  'verifying the flow refuses the aliased queue');
select throws_ok($$select pgflow.add_step('orders', 'b', array['a'])$$, '21000', 'PGMQ queue "orders" is ambiguous: pgmq.meta has 2 rows for the same tables (Orders, orders); keep one', 'add_step refuses it');
select is((select count(*) from pgflow.steps), 1::bigint, 'no step was added');

-- Aliases before any flow exists.
select pgmq.create('Billing');
select pgmq.create('BILLING');
select throws_ok($$select pgflow.create_flow('billing')$$, '42710', 'PGMQ queue "Billing" already exists; pgflow never adopts an existing queue for a new flow "billing". Drop or rename that queue, or use another flow slug', 'create_flow refuses a name with alias rows');
select throws_ok($$select pgflow.ensure_flow_compiled('billing', '{"steps": []}', pgflow.worker_protocol())$$, '42710', 'PGMQ queue "Billing" already exists; pgflow never adopts an existing queue for a new flow "billing". Drop or rename that queue, or use another flow slug',
                 'so does the compiler');
select is((select count(*) from pgflow.flows where flow_slug = 'billing'), 0::bigint, 'nothing was created');

select * from finish();
rollback;
