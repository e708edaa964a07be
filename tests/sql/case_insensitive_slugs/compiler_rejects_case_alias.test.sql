-- The startup compiler (ensure_flow_compiled) rejects a flow that differs from an existing one
-- only in case, and a shape whose step slugs differ only in case; nothing is written.
begin;
select plan(6);

select pgflow.ensure_flow_compiled('Orders', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                   pgflow.worker_protocol());

select throws_ok($$select pgflow.ensure_flow_compiled('orders', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                                       pgflow.worker_protocol())$$,
  '23505', 'Flow slug "orders" differs only in case from existing flow "Orders"; flow slugs must be unique ignoring case',
  'compiling "orders" next to "Orders" is rejected');
select results_eq($$select flow_slug from pgflow.flows$$, $$values ('Orders'::text)$$, 'only Orders exists');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('orders'::text)$$,
                  'and only its queue (lower(Orders))');

select throws_ok($$select pgflow.ensure_flow_compiled('Shipping', jsonb_build_object('steps', jsonb_build_array(
                     pgflow_tests.step_shape('fetchUser'), pgflow_tests.step_shape('FetchUser'))), pgflow.worker_protocol())$$,
  '23505', 'Step slug "FetchUser" of flow "Shipping" is defined twice (slugs must be unique ignoring case)',
  'a shape with steps fetchUser and FetchUser is rejected');
select is((select count(*) from pgflow.flows where flow_slug = 'Shipping'), 0::bigint, 'that flow was not created');
select is((select count(*) from pgmq.meta where queue_name = 'shipping'), 0::bigint, 'nor its queue');

select * from finish();
rollback;
