-- when_unmet = fail: the step fails with 'Condition not met' (failed_at, never started), the
-- run fails, other tasks are cancelled and every message archived.
begin;
select plan(5);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'first');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'strict', array['first'], required_input_pattern => '{"first": {"ok": true}}',
                       when_unmet => 'fail');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status from pgflow_tests.complete_step_task((select run_id from pgflow.runs), 'first', 0, '{"ok": false}')$$,
                  $$values ('completed')$$, 'complete_task returns the completed task');
select results_eq($$select status, error_message, (failed_at is not null), started_at from pgflow.step_states where step_slug = 'strict'$$,
                  $$values ('failed', 'Condition not met', true, null::timestamptz)$$, 'strict failed');
select results_eq($$select status, (failed_at is not null), remaining_steps from pgflow.runs$$,
                  $$values ('failed', true, 2)$$, 'the run failed');
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('first', 'completed'), ('other', 'cancelled')$$, 'other''s task is cancelled');
select is((select count(*)::int from pgmq.q_f), 0, 'no message left in the queue');

select * from finish();
rollback;
