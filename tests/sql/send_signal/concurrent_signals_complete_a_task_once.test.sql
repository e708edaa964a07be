-- Two sessions signalling one waiting task at once (both transactions open): the run lock
-- orders them, the first completes the task and the second is refused (another signal id) or
-- acknowledged as a duplicate (the same id); the task completes once, with the first payload.
select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $setup$ do $do$ begin
  perform pgflow_tests.setup_wait_flow('approval');
  perform pgflow.start_run_by_slug('approval', '{}', ('b0000000-0000-0000-0000-00000000000' || n)::uuid)
  from generate_series(1, 2) n;
  perform pgflow_tests.complete_step_task(('b0000000-0000-0000-0000-00000000000' || n)::uuid, 'draft', 0, '"d"')
  from generate_series(1, 2) n;
end $do$ $setup$);
select dblink_disconnect('setup');

begin;
select plan(6);

create temp table race_result as
select 'different ids' as name, * from pgflow_tests.race(
  $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000001', 'approve', 'from-a', '"A"')$$,
  $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000001', 'approve', 'from-b', '"B"')$$);
insert into race_result
select 'one id', * from pgflow_tests.race(
  $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000002', 'approve', 'hook', '"A"')$$,
  $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000002', 'approve', 'hook', '"B"')$$);

select is((select a_result from race_result where name = 'different ids'), 'delivered', 'the first signal is delivered');
select ok((select b_error from race_result where name = 'different ids')
          like '%Step "approve" of run "b0000000-0000-0000-0000-000000000001" is completed: the signal is refused%',
          'the second, blocked behind it, is refused');
select is((select output from pgflow.step_states where run_id = 'b0000000-0000-0000-0000-000000000001' and step_slug = 'approve'),
          '"A"'::jsonb, 'the step''s output is the first payload');
select is((select a_result || ' / ' || b_result from race_result where name = 'one id'), 'delivered / duplicate',
          'the same signal id from two sessions: delivered once, then a duplicate');
select is((select output from pgflow.step_states where run_id = 'b0000000-0000-0000-0000-000000000002' and step_slug = 'approve'),
          '"A"'::jsonb, 'with the first payload');
select is(array(select signal_id from pgflow.signals order by run_id, signal_id), array['from-a', 'hook'],
          'one signal kept per task');

select * from finish();
rollback;
