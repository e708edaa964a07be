-- when_unmet = skip skips only the step: its dependents still run, and the skipped step is
-- absent from their input.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'root');
select pgflow.add_step('f', 'maybe', array['root'], required_input_pattern => '{"root": "go"}');
select pgflow.add_step('f', 'after', array['root', 'maybe']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'root', 0, '"stop"') \g /dev/null
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'started'), ('maybe', 'skipped'), ('root', 'completed')$$,
                  'maybe skipped, after started');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'after')$$,
                  $$values ('{"root": "stop"}'::jsonb)$$, 'after''s input has no maybe key');
select pgflow.complete_task(:'run', 'after', 0, '"end"') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"after": "end"}'::jsonb)$$,
                  'the run completes');

select * from finish();
rollback;
