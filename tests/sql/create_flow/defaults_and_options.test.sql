-- NULL options take create_flow's defaults 3 / 5 / 60 (not the table default base_delay 1);
-- given options are stored.
begin;
select plan(5);

select pgflow.create_flow('defaults');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'defaults'$$,
  $$values (3, 5, 60)$$,
  'omitted options default to max_attempts 3, base_delay 5, timeout 60');

select pgflow.create_flow('explicit_nulls', null, null, null);
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'explicit_nulls'$$,
  $$values (3, 5, 60)$$,
  'explicit NULLs take the same defaults');

select pgflow.create_flow('custom', max_attempts => 7, base_delay => 2, timeout => 15);
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'custom'$$,
  $$values (7, 2, 15)$$,
  'given options are stored');

select pgflow.create_flow('zeros', max_attempts => 0, base_delay => 0);
select results_eq(
  $$select opt_max_attempts, opt_base_delay from pgflow.flows where flow_slug = 'zeros'$$,
  $$values (0, 0)$$,
  'zero attempts and zero base delay are allowed');

select is((select column_default from information_schema.columns
           where table_schema = 'pgflow' and table_name = 'flows' and column_name = 'opt_base_delay'),
          '1', 'the table default of opt_base_delay stays 1 (as upstream)');

select * from finish();
rollback;
