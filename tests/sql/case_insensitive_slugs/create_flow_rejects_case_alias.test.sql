-- Flow slugs are unique ignoring case: create_flow of a slug that differs from an existing
-- flow only in case fails (unique violation naming both) and changes nothing; the exact
-- spelling of the accepted slug is kept, and repeating it exactly stays idempotent.
begin;
select plan(6);

select pgflow.create_flow('Orders', timeout => 7);

select throws_ok($$select pgflow.create_flow('orders')$$, '23505',
  'Flow slug "orders" differs only in case from existing flow "Orders"; flow slugs must be unique ignoring case',
  'create_flow(orders) is rejected');
select throws_ok($$select pgflow.create_flow('ORDERS')$$, '23505', 'Flow slug "ORDERS" differs only in case from existing flow "Orders"; flow slugs must be unique ignoring case', 'create_flow(ORDERS) is rejected');
select results_eq($$select flow_slug from pgflow.flows$$, $$values ('Orders'::text)$$,
                  'one flow, spelled exactly as created (not lowercased)');
select is((select opt_timeout from pgflow.create_flow('Orders')), 7, 'create_flow(Orders) again returns the existing row');
select is((select count(*) from pgmq.meta), 0::bigint, 'no queue was created by any of these calls');
select lives_ok($$select pgflow.create_flow('Orders_v2')$$, 'a slug that differs by more than case is fine');

select * from finish();
rollback;
