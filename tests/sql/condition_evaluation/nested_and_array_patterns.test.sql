-- Patterns use jsonb containment: nested objects match partially, arrays match when they
-- contain the listed elements.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 's', required_input_pattern => '{"user": {"tags": ["vip"]}}');

select pgflow.start_flow('f', i) from (values
  ('{"case": 1, "user": {"name": "a", "tags": ["new", "vip"]}}'::jsonb),
  ('{"case": 2, "user": {"tags": ["new"]}}'),
  ('{"case": 3, "user": "vip"}'),
  ('{"case": 4}')) v(i) \g /dev/null
select results_eq($$select (r.input->>'case')::int, s.status from pgflow.step_states s join pgflow.runs r using (run_id) order by 1$$,
                  $$values (1, 'started'), (2, 'skipped'), (3, 'skipped'), (4, 'skipped')$$,
                  'containment semantics');

select * from finish();
rollback;
