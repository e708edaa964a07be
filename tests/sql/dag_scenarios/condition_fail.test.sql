-- when_unmet = fail on a dependent step: the run fails with 'Condition not met' as soon as the
-- dependency's output rules it out; the independent task is cancelled.
begin;
select plan(4);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'validate');
select pgflow.add_step('f', 'process', array['validate'], required_input_pattern => '{"validate": {"valid": true}}',
                       when_unmet => 'fail');
select pgflow.add_step('f', 'side');
select run_id as run from pgflow.start_flow('f', '{}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select pgflow.complete_task(run_id, step_slug, task_index, '{"valid": false}') from c1 where step_slug = 'validate' \g /dev/null
select results_eq($$select step_slug, status, error_message from pgflow.step_states order by step_slug$$,
                  $$values ('process', 'failed', 'Condition not met'), ('side', 'started', null), ('validate', 'completed', null)$$,
                  'process failed on its condition');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('failed', 2)$$, 'the run failed');
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('side', 'cancelled'), ('validate', 'completed')$$, 'side''s task cancelled');
select results_eq($$select event, payload->>'error_message' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started', null), ('step:side:started', null), ('step:validate:started', null),
                           ('step:validate:completed', null), ('step:process:failed', 'Condition not met'),
                           ('run:failed', 'Condition not met')$$,
                  'events in order');

select * from finish();
rollback;
