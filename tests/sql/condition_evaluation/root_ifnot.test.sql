-- `ifNot` (forbidden_input_pattern): the step runs unless the input contains the pattern.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'not_banned', forbidden_input_pattern => '{"banned": true}');

select pgflow.start_flow('f', '{"banned": false}') \g /dev/null
select pgflow.start_flow('f', '{"banned": true, "x": 1}') \g /dev/null
select results_eq($$select r.input->>'banned', s.status, s.skip_reason from pgflow.step_states s join pgflow.runs r using (run_id) order by 1$$,
                  $$values ('false', 'started', null::text), ('true', 'skipped', 'condition_unmet')$$,
                  'runs when the pattern is absent, skipped when present');
select is((select count(*)::int from pgflow.step_tasks), 1, 'one task, for the run that went ahead');

select * from finish();
rollback;
