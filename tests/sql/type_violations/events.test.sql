-- A type violation emits run:failed (no error_message) and then step:failed (with the
-- TYPE_VIOLATION message); no step:completed.
begin;
select plan(2);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset
delete from realtime.messages;
select pgflow_tests.complete_step_task(:'run', 'list', 0, 'true') \g /dev/null

select results_eq($$select event, payload->>'status', payload->>'error_message' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:failed', 'failed', null),
                           ('step:list:failed', 'failed', '[TYPE_VIOLATION] Map step each expects array input but dependency list produced boolean')$$,
                  'run:failed then step:failed');
select is((select payload->>'flow_slug' from realtime.messages where event = 'run:failed'), 'f', 'run:failed names the flow');

select * from finish();
rollback;
