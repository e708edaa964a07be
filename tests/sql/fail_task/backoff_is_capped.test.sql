-- The backoff is capped at 2147483647 s (the int range; since 0027): before, base 5 at attempt 29
-- overflowed the int cast (22003), so every failure report of such a task raised and it could
-- neither retry nor fail.
begin;
select plan(8);
select is(pgflow.calculate_retry_delay(1.5, 3), 12, 'below the cap, floor(base * 2^attempts) as before');
select is(pgflow.calculate_retry_delay(5, 28), 1342177280, 'base 5 at attempt 28: 1342177280 s');
select is(pgflow.calculate_retry_delay(5, 29), 2147483647, 'base 5 at attempt 29: the cap, not 22003');
select is(pgflow.calculate_retry_delay(1, 2000), 2147483647, 'attempt 2000 (past what power() in float8 takes): the cap');
select is(pgflow.calculate_retry_delay(0, 2000), 0, 'base 0: no delay, whatever the attempt');
select is(pgflow.calculate_retry_delay(5, null), null, 'NULL in, NULL out (not the cap)');

select pgflow.create_flow('f', max_attempts => 100, base_delay => 5);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'only');
update pgflow.step_tasks set attempts_count = 40;
select clock_timestamp() as t0 \gset
select results_eq(format($$select status, attempts_count from pgflow.fail_task(%L, 'only', 0, 'again')$$, :'run'),
                  $$values ('queued', 40)$$, 'a failure at attempt 40 is retried');
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('only', 'f', 2147483647, :'t0', :'t1'), 'its message hidden for the capped delay');

select * from finish();
rollback;
