-- Replays after a skip change nothing: fail_task again for the failed task and for a skipped
-- sibling, and complete_task for a sibling; counters are decremented once only.
begin;
select plan(5);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'items', step_type => 'map', when_exhausted => 'skip');
select pgflow.add_step('f', 'other');
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset
select pgflow_tests.start_task(:'run', 'items', 1) \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'items', 0, 'first') \g /dev/null

select results_eq($$select status, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'items', 0, 'again')$$,
                  $$values ('failed', 'first')$$, 'fail_task replay for the failed task: unchanged');
select results_eq($$select status, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'items', 1, 'sibling')$$,
                  $$values ('skipped', null::text)$$, 'fail_task for a skipped sibling: unchanged');
select results_eq($$select status from pgflow.complete_task((select run_id from pgflow.runs), 'items', 1, '1')$$,
                  $$values ('skipped')$$, 'complete_task for a skipped sibling: unchanged');
select results_eq($$select status, skip_reason, error_message from pgflow.step_states where step_slug = 'items'$$,
                  $$values ('skipped', 'handler_failed', 'first')$$, 'the step keeps its first skip');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('started', 1)$$,
                  'remaining_steps was decremented once (other still to go)');

select * from finish();
rollback;
