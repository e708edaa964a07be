-- opt_start_delay delays a step's first messages (root at start, dependent when it starts);
-- retries use the backoff, not the start delay.
begin;
select plan(7);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 2, base_delay => 2);
select pgflow.add_step('f', 'first', start_delay => 30);
select pgflow.add_step('f', 'second', array['first'], start_delay => 60);
select clock_timestamp() as t0 \gset
select run_id as run from pgflow.start_flow('f', '{}') \gset
select clock_timestamp() as t1 \gset

select ok(pgflow_tests.visible_after('first', 'f', 30, :'t0', :'t1'), 'first''s message is delayed 30 s');
select is_empty($$select * from pgflow_tests.read_and_start('f', 30, 10)$$, 'nothing to read before the delay');
select pgflow_tests.reset_message_visibility('f');

select clock_timestamp() as t0 \gset
select pgflow.fail_task(run_id, step_slug, task_index, 'oops') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('first', 'f', 4, :'t0', :'t1'), 'the retry waits the 4 s backoff, not 30 s');
select pgflow_tests.reset_message_visibility('f');
select clock_timestamp() as t0 \gset
select pgflow.complete_task(run_id, step_slug, task_index, '"one"') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select clock_timestamp() as t1 \gset

select ok(pgflow_tests.visible_after('second', 'f', 60, :'t0', :'t1'), 'second''s message is delayed 60 s');
select is_empty($$select * from pgflow_tests.read_and_start('f', 30, 10)$$, 'second is not readable yet');
select pgflow_tests.reset_message_visibility('f');
select pgflow.complete_task(run_id, step_slug, task_index, '"two"') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"second": "two"}'::jsonb)$$,
                  'the run completed');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:first:started'), ('step:first:completed'), ('step:second:started'),
                           ('step:second:completed'), ('run:completed')$$,
                  'events in order');

select * from finish();
rollback;
