-- Condition events: step:skipped with skip_reason condition_unmet, flow_slug and skipped_at;
-- a `fail` condition emits step:failed then run:failed, both with 'Condition not met'.
begin;
select plan(3);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'skipped_one', required_input_pattern => '{"x": 1}');
select pgflow.create_flow('g');
select pgflow.add_step('g', 'strict', required_input_pattern => '{"x": 1}', when_unmet => 'fail');
select run_id as rf from pgflow.start_flow('f', '{}') \gset
select run_id as rg from pgflow.start_flow('g', '{}') \gset

select results_eq(format($$select event, payload->>'status', payload->>'skip_reason', payload->>'flow_slug', payload ? 'skipped_at'
                           from pgflow_tests.realtime_events(%L) where event like 'step:%%'$$, :'rf'),
                  $$values ('step:skipped_one:skipped', 'skipped', 'condition_unmet', 'f', true)$$,
                  'step:skipped for the skip');
select results_eq(format($$select event from pgflow_tests.realtime_events(%L)$$, :'rf'),
                  $$values ('run:started'), ('step:skipped_one:skipped'), ('run:completed')$$,
                  'run:started, step:skipped, run:completed');
select results_eq(format($$select event, payload->>'status', payload->>'error_message' from pgflow_tests.realtime_events(%L)$$, :'rg'),
                  $$values ('run:started', 'started', null), ('step:strict:failed', 'failed', 'Condition not met'),
                           ('run:failed', 'failed', 'Condition not met')$$,
                  'step:failed then run:failed with Condition not met');

select * from finish();
rollback;
