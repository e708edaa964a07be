-- A dependent step's condition is tested against {dep_slug: output} of its dependencies, not
-- the run input, and only once its dependencies are done (it stays created before that).
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'check');
select pgflow.add_step('f', 'notify', array['check'], required_input_pattern => '{"check": {"ok": true}}');
select run_id as r1 from pgflow.start_flow('f', '{"check": {"ok": true}}') \gset
select run_id as r2 from pgflow.start_flow('f', '{"check": {"ok": true}}') \gset

select is((select count(*)::int from pgflow.step_states where step_slug = 'notify' and status = 'created'), 2,
          'not evaluated while the dependency is pending (the run input would match)');
select pgflow_tests.complete_step_task(:'r1', 'check', 0, '{"ok": true, "n": 1}') \g /dev/null
select pgflow_tests.complete_step_task(:'r2', 'check', 0, '{"ok": false}') \g /dev/null
select is((select status from pgflow.step_states where run_id = :'r1' and step_slug = 'notify'), 'started',
          'dependency output matches: the step starts');
select results_eq(format($$select status, skip_reason from pgflow.step_states where run_id = %L and step_slug = 'notify'$$, :'r2'),
                  $$values ('skipped', 'condition_unmet')$$, 'dependency output does not match: skipped');
select results_eq(format($$select status, output from pgflow.runs where run_id = %L$$, :'r2'),
                  $$values ('completed', null::jsonb)$$, 'that run completes without leaf output');

select * from finish();
rollback;
