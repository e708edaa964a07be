-- opt_start_delay delays a dependent step's first messages; a retry uses the backoff instead.
begin;
select plan(4);

select pgflow.create_flow('d', base_delay => 3, max_attempts => 2);
select pgflow.add_step('d', 'first');
select pgflow.add_step('d', 'later', array['first'], start_delay => 100);
select pgflow.add_step('d', 'each', array['first'], step_type => 'map', start_delay => 50);
select run_id as run from pgflow.start_flow('d', '{}') \gset
select pgflow.start_tasks('d', array(select message_id from pgflow.step_tasks), (pgflow_tests.ensure_worker('d')).worker_id);
select clock_timestamp() as t0 \gset
select pgflow.complete_task(:'run', 'first', 0, '[1, 2]');
select clock_timestamp() as t1 \gset

select ok(pgflow_tests.visible_after('later', 'd', 100, :'t0', :'t1'),
          'the single step''s message is hidden for 100 s');
select ok(pgflow_tests.visible_after('each', 'd', 50, :'t0', :'t1')
          and (select count(*) = 2 from pgflow_tests.message_timing('each', 'd')),
          'both map messages are hidden for 50 s');

-- Claim the delayed task anyway, fail it: the retry waits base_delay * 2^1 = 6 s, not 100 s.
select pgflow.start_tasks('d', array(select message_id from pgflow.step_tasks where step_slug = 'later'),
                          '11111111-1111-1111-1111-111111111111');
select clock_timestamp() as t0 \gset
select pgflow.fail_task(:'run', 'later', 0, 'boom');
select clock_timestamp() as t1 \gset
select is((select status from pgflow.step_tasks where step_slug = 'later'), 'queued', 'the task is queued for a retry');
select ok(pgflow_tests.visible_after('later', 'd', 6, :'t0', :'t1'),
          'the retry is delayed by the backoff (6 s), not by start_delay');

select * from finish();
rollback;
