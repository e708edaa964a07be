-- With both patterns the condition holds only when `if` matches and `ifNot` does not.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 's', required_input_pattern => '{"role": "admin"}',
                       forbidden_input_pattern => '{"suspended": true}');

select pgflow.start_flow('f', i) from (values
  ('{"case": 1, "role": "admin"}'::jsonb),
  ('{"case": 2, "role": "admin", "suspended": true}'),
  ('{"case": 3, "role": "user"}'),
  ('{"case": 4, "role": "user", "suspended": true}')) v(i) \g /dev/null
select results_eq($$select (r.input->>'case')::int, s.status from pgflow.step_states s join pgflow.runs r using (run_id) order by 1$$,
                  $$values (1, 'started'), (2, 'skipped'), (3, 'skipped'), (4, 'skipped')$$,
                  'only if-met and ifNot-unmatched runs');

select * from finish();
rollback;
