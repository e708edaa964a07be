-- A step's opt_base_delay overrides the flow's; steps without one use the flow's.
begin;
select plan(2);
select pgflow.create_flow('f', base_delay => 10);
select pgflow.add_step('f', 'own', base_delay => 2);
select pgflow.add_step('f', 'inherits');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'own') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'inherits') \g /dev/null
select ok((select vt_seconds between 3 and 4 from pgflow_tests.message_timing('own', 'f')),
          'step base_delay 2: 4 s after attempt 1');
select ok((select vt_seconds between 19 and 20 from pgflow_tests.message_timing('inherits', 'f')),
          'flow base_delay 10: 20 s after attempt 1');

select * from finish();
rollback;
