-- start_ready_steps starts created steps with remaining_deps = 0 and initial_tasks > 0 only,
-- and never twice.
begin;
select plan(6);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'root');
select pgflow.add_step('f', 'waiting', array['root']);
select pgflow.add_step('f', 'unknown_map', array['root'], step_type => 'map');
select pgflow.add_step('f', 'taskless_map', array['root'], step_type => 'map');
select pgflow.add_step('f', 'ready', array['root']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

-- Make some steps ready by hand: deps satisfied, but unknown or zero task counts.
update pgflow.step_states set remaining_deps = 0 where step_slug in ('unknown_map', 'taskless_map', 'ready');
update pgflow.step_states set initial_tasks = 0 where step_slug = 'taskless_map';
select pgflow.start_ready_steps(:'run');

select is((select status from pgflow.step_states where step_slug = 'ready'), 'started', 'a ready single step starts');
select is((select status from pgflow.step_states where step_slug = 'waiting'), 'created', 'a step with pending deps waits');
select is((select status from pgflow.step_states where step_slug = 'unknown_map'), 'created',
          'a map whose task count is unknown waits');
select is((select status from pgflow.step_states where step_slug = 'taskless_map'), 'created',
          'a taskless step is left to the taskless cascade');
select pgflow.start_ready_steps(:'run');
select is((select count(*) from pgflow.step_tasks where step_slug = 'ready'), 1::bigint,
          'calling again does not start a step twice');
select is((pgflow_tests.queue_counts('f')).active, 2::bigint, 'messages: the root and "ready" only');

select * from finish();
rollback;
