-- Constraint output_only_for_completed_or_null: only a completed step may have an output; a
-- started, failed or skipped step keeps NULL.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'started_one');
select pgflow.add_step('f', 'skipped_one', when_exhausted => 'skip');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select throws_ok($$update pgflow.step_states set output = '"x"' where step_slug = 'started_one'$$,
                 '23514', 'new row for relation "step_states" violates check constraint "output_only_for_completed_or_null"', 'a started step cannot have an output');
select pgflow_tests.fail_step_task(:'run', 'skipped_one') \g /dev/null
select results_eq($$select status, output from pgflow.step_states where step_slug = 'skipped_one'$$,
                  $$values ('skipped', null::jsonb)$$, 'a skipped step has no output');
select throws_ok($$update pgflow.step_states set output = '"x"' where step_slug = 'skipped_one'$$,
                 '23514', 'new row for relation "step_states" violates check constraint "output_only_for_completed_or_null"', 'and cannot get one');
select pgflow_tests.fail_step_task(:'run', 'started_one') \g /dev/null
select results_eq($$select status, output from pgflow.step_states where step_slug = 'started_one'$$,
                  $$values ('failed', null::jsonb)$$, 'a failed step has no output');

select * from finish();
rollback;
