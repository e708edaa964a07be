-- A step's opt_base_delay overrides the flow's; steps without one use the flow's.
begin;
select plan(2);
select pgflow.create_flow('f', base_delay => 10);
select pgflow.add_step('f', 'own', base_delay => 2);
select pgflow.add_step('f', 'inherits');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select clock_timestamp() as t0 \gset
select pgflow_tests.fail_step_task(:'run', 'own') \g /dev/null
select clock_timestamp() as t1 \gset
select clock_timestamp() as u0 \gset
select pgflow_tests.fail_step_task(:'run', 'inherits') \g /dev/null
select clock_timestamp() as u1 \gset
select ok(pgflow_tests.visible_after('own', 'f', 4, :'t0', :'t1'),
          'step base_delay 2: 4 s after attempt 1');
select ok(pgflow_tests.visible_after('inherits', 'f', 20, :'u0', :'u1'),
          'flow base_delay 10: 20 s after attempt 1');

select * from finish();
rollback;
