-- Case-insensitive uniqueness holds under concurrency: two sessions creating "Orders" and
-- "orders" at the same time (both transactions open) end with exactly one flow, through
-- create_flow, through the startup compiler, and through direct INSERTs that bypass the API's
-- lock (the unique index decides). The loser fails instead of waiting forever or winning too.
begin;
select plan(12);

create temp table race_result (name text, error text);

insert into race_result select 'create_flow',
  (pgflow_tests.race($$select pgflow.create_flow('Orders')::text$$, $$select pgflow.create_flow('orders')::text$$)).b_error;
select ok((select error from race_result where name = 'create_flow') like '%differs only in case from existing flow "Orders"%',
          'create_flow: the second session fails with the case conflict');
select results_eq($$select flow_slug from pgflow.flows where lower(flow_slug) = 'orders'$$, $$values ('Orders'::text)$$,
                  'create_flow: exactly one flow, the first one');

insert into race_result select 'compiler', (pgflow_tests.race(
  $$select pgflow.ensure_flow_compiled('Billing', '{"steps": []}', pgflow.worker_protocol())::text$$,
  $$select pgflow.ensure_flow_compiled('billing', '{"steps": []}', pgflow.worker_protocol())::text$$)).b_error;
select ok((select error from race_result where name = 'compiler') like '%differs only in case from existing flow "Billing"%',
          'compiler: the second compilation fails with the case conflict');
select results_eq($$select flow_slug from pgflow.flows where lower(flow_slug) = 'billing'$$, $$values ('Billing'::text)$$,
                  'compiler: exactly one flow');
select results_eq($$select queue_name::text from pgmq.meta where lower(queue_name) = 'billing'$$, $$values ('billing'::text)$$,
                  'compiler: exactly one queue');

insert into race_result select 'insert', (pgflow_tests.race(
  $$insert into pgflow.flows (flow_slug, flow_alias) values ('Shipping', 'Shipping')$$,
  $$insert into pgflow.flows (flow_slug, flow_alias) values ('SHIPPING', 'SHIPPING')$$)).b_error;
select ok((select error from race_result where name = 'insert') like '%flows_flow_slug_lower_key%',
          'direct INSERT: the second insert waits, then fails on the lower(flow_slug) index');
select results_eq($$select flow_slug from pgflow.flows where lower(flow_slug) = 'shipping'$$, $$values ('Shipping'::text)$$,
                  'direct INSERT: exactly one flow');

insert into race_result select 'add_step', (pgflow_tests.race(
  $$select pgflow.add_step('Orders', 'fetchUser')::text$$,
  $$select pgflow.add_step('Orders', 'FetchUser')::text$$)).b_error;
select ok((select error from race_result where name = 'add_step') like '%differs only in case from step "fetchUser"%',
          'add_step: the second session fails with the case conflict');
select results_eq($$select step_slug from pgflow.steps where flow_slug = 'Orders'$$, $$values ('fetchUser'::text)$$,
                  'add_step: exactly one step');

insert into race_result select 'step insert', (pgflow_tests.race(
  $$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('Shipping', 'pack', 0, 'shipping')$$,
  $$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('Shipping', 'PACK', 1, 'shipping')$$)).b_error;
select ok((select error from race_result where name = 'step insert') like '%steps_step_slug_lower_key%',
          'direct step INSERT: the second waits, then fails on the (flow, lower(step)) index');
select results_eq($$select step_slug from pgflow.steps where flow_slug = 'Shipping'$$, $$values ('pack'::text)$$,
                  'direct step INSERT: exactly one step');
select is((select count(*) from race_result where error is null), 0::bigint, '(every second session failed)');

select * from finish();
rollback;
