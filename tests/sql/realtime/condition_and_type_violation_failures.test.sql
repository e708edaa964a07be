-- A when_unmet = fail condition broadcasts step:failed then run:failed ("Condition not met");
-- a type violation broadcasts run:failed (no error_message) then step:failed.
begin;
select plan(4);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('c');
select pgflow.add_step('c', 'strict', required_input_pattern => '{"ok": true}', when_unmet => 'fail');
select run_id as run from pgflow.start_flow('c', '{"ok": false}') \gset
select results_eq($$select event, payload->>'error_message' from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
                  $$values ('run:started'::text, null::text), ('step:strict:failed', 'Condition not met'),
                           ('run:failed', 'Condition not met')$$,
                  'condition failure: step:failed, then run:failed, both "Condition not met"');

select pgflow.create_flow('t');
select pgflow.add_step('t', 'producer');
select pgflow.add_step('t', 'each', array['producer'], step_type => 'map');
select run_id as trun from pgflow.start_flow('t', '{}') \gset
select pgflow_tests.ensure_worker('t');
select count(*) from pgflow.start_tasks('t', array(select message_id from pgflow.step_tasks where flow_slug = 't'),
                                        '11111111-1111-1111-1111-111111111111');
select pgflow.complete_task(:'trun', 'producer', 0, '{"not": "an array"}');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'trun' || $$') offset 2$$,
                  $$values ('run:failed'::text), ('step:producer:failed')$$,
                  'type violation: run:failed, then step:failed');
select is((select payload from realtime.messages where event = 'run:failed' and topic = 'pgflow:run:' || :'trun'),
          (select jsonb_build_object('event_type', 'run:failed', 'run_id', r.run_id, 'flow_slug', 't',
                                     'status', 'failed', 'failed_at', r.failed_at)
           from pgflow.runs r where r.run_id = :'trun'),
          'its run:failed payload has no error_message');
select is((select payload->>'error_message' from realtime.messages where event = 'step:producer:failed'),
          '[TYPE_VIOLATION] Map step each expects array input but dependency producer produced object',
          'its step:failed carries the type violation');

select * from finish();
rollback;
