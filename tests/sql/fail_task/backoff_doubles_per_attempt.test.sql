-- A retry hides the message for floor(base_delay * 2^attempts_count) seconds (via its
-- visibility, not a new message): base 3 gives 6 s after attempt 1, 12 s after 2, 24 s after 3.
begin;
select plan(5);
select pgflow.create_flow('f', max_attempts => 4, base_delay => 3);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select clock_timestamp() as t0 \gset
select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('only', 'f', 6, :'t0', :'t1'),
          'after attempt 1: 6 s');
select clock_timestamp() as t0 \gset
select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('only', 'f', 12, :'t0', :'t1'),
          'after attempt 2: 12 s');
select clock_timestamp() as t0 \gset
select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('only', 'f', 24, :'t0', :'t1'),
          'after attempt 3: 24 s');
select is((select count(*)::int from pgmq.q_f), 1, 'still exactly one message');
select is(pgflow.calculate_retry_delay(1.5, 3), 12, 'calculate_retry_delay is floor(base * 2^attempts)');

select * from finish();
rollback;
