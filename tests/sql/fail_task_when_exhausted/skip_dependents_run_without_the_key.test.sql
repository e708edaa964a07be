-- After a plain skip the dependents still run; the skipped step is absent from their input
-- (not null), and the run output holds the completed leaves only.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'flaky', when_exhausted => 'skip');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'only_flaky', array['flaky']);
select pgflow.add_step('f', 'join', array['flaky', 'other']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'flaky') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'other', 0, '"O"') \g /dev/null

select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'only_flaky')$$,
                  $$values ('{}'::jsonb)$$, 'a dependent of only the skipped step gets {}');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'join')$$,
                  $$values ('{"other": "O"}'::jsonb)$$, 'join gets other''s output and no flaky key');
select pgflow.complete_task(:'run', 'only_flaky', 0, '1') \g /dev/null
select pgflow.complete_task(:'run', 'join', 0, '2') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$,
                  $$values ('completed', '{"only_flaky": 1, "join": 2}'::jsonb)$$, 'the run completes');
select is((select status from pgflow.step_states where step_slug = 'flaky'), 'skipped', 'flaky stays skipped');

select * from finish();
rollback;
