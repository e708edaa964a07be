-- An exhausted task with when_exhausted = fail broadcasts step:<slug>:failed then run:failed,
-- both with the error message; a retry broadcasts nothing.
begin;
select plan(4);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'work');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.ensure_worker('f');
delete from realtime.messages;

select count(*) from pgflow.start_tasks('f', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
select pgflow.fail_task(:'run', 'work', 0, 'first try');
select is((select count(*) from realtime.messages), 0::bigint, 'a retry sends nothing');

select count(*) from pgflow.start_tasks('f', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
select pgflow.fail_task(:'run', 'work', 0, 'second try');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
                  $$values ('step:work:failed'::text), ('run:failed')$$, 'step:failed, then run:failed');
select is((select payload from realtime.messages where event = 'step:work:failed'),
          (select jsonb_build_object('event_type', 'step:failed', 'run_id', ss.run_id, 'step_slug', 'work',
                                     'status', 'failed', 'error_message', 'second try', 'failed_at', ss.failed_at)
           from pgflow.step_states ss),
          'step:failed payload: event_type, run_id, step_slug, status, error_message, failed_at');
select is((select payload from realtime.messages where event = 'run:failed'),
          (select jsonb_build_object('event_type', 'run:failed', 'run_id', r.run_id, 'flow_slug', 'f',
                                     'status', 'failed', 'error_message', 'second try', 'failed_at', r.failed_at)
           from pgflow.runs r),
          'run:failed payload: event_type, run_id, flow_slug, status, error_message, failed_at');

select * from finish();
rollback;
