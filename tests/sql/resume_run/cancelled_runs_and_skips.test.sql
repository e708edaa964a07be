-- A cancelled run resumes like a failed one (its cancellation is cleared); steps skipped while
-- the run went on (when_exhausted skip) stay skipped; a step that never started starts when
-- ready. The steps the cancellation failed (schema 0014) start again, or wait for their
-- dependencies, without the cancellation's error.
begin;
select plan(6);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'optional', when_exhausted => 'skip');
select pgflow.add_step('f', 'slow');
select pgflow.add_step('f', 'after', array['slow']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'run', 'optional') \g /dev/null
select pgflow_tests.start_task(:'run', 'slow') \g /dev/null
select pgflow.cancel_run(:'run', 'oops') \g /dev/null

select is((pgflow.resume_run(:'run')).status, 'started', 'a cancelled run resumes');
select results_eq($$select cancelled_at, cancel_reason from pgflow.runs$$, $$values (null::timestamptz, null::text)$$,
                  'and is no longer cancelled');
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'created', null::text), ('optional', 'skipped', 'handler_failed'), ('slow', 'started', null)$$,
                  'the skipped step stays skipped');
select results_eq($$select step_slug, error_message, failed_at from pgflow.step_states where step_slug <> 'optional' order by step_slug$$,
                  $$values ('after', null::text, null::timestamptz), ('slow', null, null)$$,
                  'the steps the cancellation failed carry no error any more');
select pgflow_tests.complete_step_task(:'run', 'slow', 0, '1') \g /dev/null
select is((select status from pgflow.step_tasks where step_slug = 'after'), 'queued', 'the step after it starts when ready');
select pgflow_tests.complete_step_task(:'run', 'after', 0, '2') \g /dev/null
select is((select status from pgflow.runs), 'completed', 'and the run completes');

select * from finish();
rollback;
