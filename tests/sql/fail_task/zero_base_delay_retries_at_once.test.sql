-- With base_delay 0 the retried message is visible again at once, and a worker's next read
-- claims the task for attempt 2 with the same input.
begin;
select plan(3);
select pgflow.create_flow('f', base_delay => 0);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{"k": "v"}') \gset

select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('only', 'f')), 'visible at once');
select results_eq($$select step_slug, input, flow_input from pgflow_tests.read_and_start('f')$$,
                  $$values ('only', '{}'::jsonb, '{"k": "v"}'::jsonb)$$, 'read and claimed again with the same input');
select results_eq($$select status, attempts_count from pgflow.step_tasks$$, $$values ('started', 2)$$,
                  'second attempt started');

select * from finish();
rollback;
