-- The pattern ifNot {dep: {}} matches whenever dep completed with an object output, so a step
-- with it runs only when dep was skipped: a fallback branch.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'primary', required_input_pattern => '{"use_primary": true}');
select pgflow.add_step('f', 'fallback', array['primary'], forbidden_input_pattern => '{"primary": {}}');

select pgflow.start_flow('f', '{"use_primary": false, "case": "skipped"}') \g /dev/null
select pgflow.start_flow('f', '{"use_primary": true, "case": "ran"}') \g /dev/null
select pgflow_tests.complete_step_task(run_id, 'primary', 0, '{"value": 1}') from pgflow.runs
 where input->>'case' = 'ran' \g /dev/null

select results_eq($$select r.input->>'case', s.status from pgflow.step_states s join pgflow.runs r using (run_id)
                    where s.step_slug = 'fallback' order by 1$$,
                  $$values ('ran', 'skipped'), ('skipped', 'started')$$,
                  'fallback runs only when primary was skipped');
select results_eq($$select t.input from pgflow.runs r, pgflow_tests.start_task(r.run_id, 'fallback') t
                    where r.input->>'case' = 'skipped'$$,
                  $$values ('{}'::jsonb)$$, 'and gets no primary key');

select * from finish();
rollback;
