-- A condition-skipped step has skipped_at and no started_at; a taskless step has started_at =
-- completed_at; a handler-skipped step keeps its started_at and gets skipped_at.
begin;
select plan(3);

select pgflow.create_flow('s', max_attempts => 1);
select pgflow.add_step('s', 'gated', required_input_pattern => '{"go": true}');
select pgflow.add_step('s', 'empty', step_type => 'map');
select pgflow.add_step('s', 'flaky', when_exhausted => 'skip');
select pgflow.start_flow('s', '[]');
select pgflow_tests.poll_and_fail('s');

select results_eq($$select started_at, skipped_at = now(), completed_at from pgflow.step_states where step_slug = 'gated'$$,
                  $$values (null::timestamptz, true, null::timestamptz)$$, 'condition skip: skipped_at only');
select results_eq($$select started_at = now(), completed_at = started_at, skipped_at from pgflow.step_states where step_slug = 'empty'$$,
                  $$values (true, true, null::timestamptz)$$, 'taskless: started_at = completed_at');
select results_eq($$select started_at = now(), skipped_at = now(), failed_at from pgflow.step_states where step_slug = 'flaky'$$,
                  $$values (true, true, null::timestamptz)$$, 'handler skip: started_at and skipped_at, no failed_at');

select * from finish();
rollback;
