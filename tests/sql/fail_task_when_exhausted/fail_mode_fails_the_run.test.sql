-- when_exhausted = fail (the default) fails the step and the run; steps not yet finished stay as
-- they are, their tasks are cancelled and nothing new starts.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'flaky');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'after', array['other']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select is((select when_exhausted from pgflow.steps where step_slug = 'flaky'), 'fail', 'fail is the default');
select pgflow_tests.fail_step_task(:'run', 'flaky', 0, 'x') \g /dev/null
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'created'), ('flaky', 'failed'), ('other', 'started')$$,
                  'flaky failed; the others are where they were');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('failed', 3)$$,
                  'the run failed and keeps its remaining_steps');
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('flaky', 'failed'), ('other', 'cancelled')$$, 'the other task is cancelled');

select * from finish();
rollback;
