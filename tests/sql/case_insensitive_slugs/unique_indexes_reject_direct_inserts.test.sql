-- Writers that bypass the API (direct INSERT) hit the unique indexes on lower(flow_slug) and
-- (flow_slug, lower(step_slug)).
begin;
select plan(4);

select pgflow.create_flow('Orders');
select pgflow.add_step('Orders', 'fetchUser');

select throws_ok($$insert into pgflow.flows (flow_slug, flow_alias) values ('ORDERS', 'ORDERS')$$, '23505',
  'duplicate key value violates unique constraint "flows_flow_slug_lower_key"', 'a flow row ORDERS next to Orders');
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('Orders', 'FETCHUSER', 1, 'orders')$$,
  '23505', 'duplicate key value violates unique constraint "steps_step_slug_lower_key"', 'a step row FETCHUSER next to fetchUser');
select lives_ok($$insert into pgflow.flows (flow_slug, flow_alias) values ('Orders2', 'Orders2')$$, 'a distinct flow row is fine');
select lives_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('Orders2', 'FETCHUSER', 0, 'orders2')$$,
  'the same step slug in another flow is fine');

select * from finish();
rollback;
