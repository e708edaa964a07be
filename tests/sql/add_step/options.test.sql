-- Per-step options are stored as given; NULL means "inherit from the flow". Each has a check.
begin;
select plan(8);

select pgflow.create_flow('f');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay
    from pgflow.add_step('f', 's', max_attempts => 4, base_delay => 2, timeout => 30, start_delay => 100)$$,
  $$values (4, 2, 30, 100)$$,
  'options are stored');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay
    from pgflow.add_step('f', 'zeros', max_attempts => 0, base_delay => 0, start_delay => 0)$$,
  $$values (0, 0, null::int, 0)$$,
  'zero attempts, base delay and start delay are allowed');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay
    from pgflow.add_step('f', 'inherit')$$,
  $$values (null::int, null::int, null::int, null::int)$$,
  'omitted options stay NULL');

select throws_ok($$select pgflow.add_step('f', 'x', max_attempts => -1)$$, '23514',
  'new row for relation "steps" violates check constraint "opt_max_attempts_is_nonnegative"',
  'negative max_attempts');
select throws_ok($$select pgflow.add_step('f', 'x', base_delay => -1)$$, '23514',
  'new row for relation "steps" violates check constraint "opt_base_delay_is_nonnegative"',
  'negative base_delay');
select throws_ok($$select pgflow.add_step('f', 'x', timeout => 0)$$, '23514',
  'new row for relation "steps" violates check constraint "opt_timeout_is_positive"',
  'zero timeout');
select throws_ok($$select pgflow.add_step('f', 'x', start_delay => -5)$$, '23514',
  'new row for relation "steps" violates check constraint "opt_start_delay_is_nonnegative"',
  'negative start_delay');
select is((select count(*) from pgflow.steps where step_slug = 'x'), 0::bigint,
          'no invalid step was stored');

select * from finish();
rollback;
