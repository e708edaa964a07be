-- A single step may complete with SQL NULL or JSON null; the step is completed either way and
-- the dependent sees null under the step's key.
begin;
select plan(4);
select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'root_a', 0, null) \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'root_b', 0, 'null') \g /dev/null
select results_eq($$select step_slug, status, output from pgflow.step_states where step_slug like 'root_%' order by 1$$,
                  $$values ('root_a', 'completed', null::jsonb), ('root_b', 'completed', 'null'::jsonb)$$,
                  'SQL NULL and JSON null stored as given');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'last')$$,
                  $$values ('{"root_a": null, "root_b": null}'::jsonb)$$, 'the dependent sees both keys with null');
select pgflow.complete_task(:'run', 'last', 0, null) \g /dev/null
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"last": null}'::jsonb)$$,
                  'a NULL leaf output appears as null in the run output');
select is((select count(*)::int from pgflow.step_states where status = 'completed'), 3, 'all completed');

select * from finish();
rollback;
