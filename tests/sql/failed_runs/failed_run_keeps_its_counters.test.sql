-- A failed run keeps remaining_steps > 0, has failed_at but no completed_at or output, and the
-- completed steps keep their outputs.
begin;
select plan(2);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'first');
select pgflow.add_step('f', 'second', array['first']);
select pgflow.add_step('f', 'third', array['second']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'first', 0, '1') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'second') \g /dev/null

select results_eq($$select status, remaining_steps, (failed_at is not null), completed_at, output from pgflow.runs$$,
                  $$values ('failed', 2, true, null::timestamptz, null::jsonb)$$, 'run counters and timestamps');
select results_eq($$select step_slug, status, output from pgflow.step_states order by step_slug$$,
                  $$values ('first', 'completed', '1'::jsonb), ('second', 'failed', null), ('third', 'created', null)$$,
                  'step states');

select * from finish();
rollback;
