-- Events of exhausted retries: skip emits step:skipped (handler_failed, error_message);
-- skip-cascade adds step:skipped (dependency_skipped) per dependent after it; fail emits
-- step:failed then run:failed, both with the error.
begin;
select plan(4);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'skipper', when_exhausted => 'skip');
select pgflow.add_step('f', 'cascader', when_exhausted => 'skip-cascade');
select pgflow.add_step('f', 'below', array['cascader']);
select pgflow.add_step('f', 'failer');
select run_id as run from pgflow.start_flow('f', '{}') \gset
delete from realtime.messages;

select pgflow_tests.fail_step_task(:'run', 'skipper', 0, 'e1') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'cascader', 0, 'e2') \g /dev/null
select results_eq(
  $$select event, payload->>'status', payload->>'skip_reason', payload->>'error_message', payload ? 'skipped_at'
    from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
  $$values ('step:skipper:skipped', 'skipped', 'handler_failed', 'e1', true),
           ('step:cascader:skipped', 'skipped', 'handler_failed', 'e2', true),
           ('step:below:skipped', 'skipped', 'dependency_skipped', null, true)$$,
  'skip and skip-cascade events in order');
delete from realtime.messages;

select pgflow_tests.fail_step_task(:'run', 'failer', 0, 'e3') \g /dev/null
select results_eq(
  $$select event, payload->>'status', payload->>'error_message', payload ? 'failed_at'
    from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
  $$values ('step:failer:failed', 'failed', 'e3', true), ('run:failed', 'failed', 'e3', true)$$,
  'step:failed then run:failed');
select is((select payload->>'flow_slug' from realtime.messages where event = 'run:failed'), 'f',
          'run:failed names the flow');
select ok((select bool_and(topic = 'pgflow:run:' || (select run_id from pgflow.runs)) from realtime.messages),
          'all on the run topic');

select * from finish();
rollback;
