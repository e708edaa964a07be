-- Single steps: a root step gets input {} and flow_input = the run input; a dependent step gets
-- {dep_slug: output} of its completed parents (a skipped parent is absent) and flow_input NULL.
-- There is no "run" key.
begin;
select plan(4);

select pgflow.create_flow('s');
select pgflow.add_step('s', 'a');
select pgflow.add_step('s', 'b');
select pgflow.add_step('s', 'maybe', required_input_pattern => '{"go": true}');
select pgflow.add_step('s', 'join', array['a', 'b', 'maybe']);
select run_id as run from pgflow.start_flow('s', '{"go": false, "n": 7}') \gset
select pgflow_tests.ensure_worker('s');

select results_eq(
  $$select step_slug, input, flow_input from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111')
    order by step_slug$$,
  $$values ('a'::text, '{}'::jsonb, '{"go": false, "n": 7}'::jsonb), ('b', '{}', '{"go": false, "n": 7}')$$,
  'root steps: input {} and flow_input = run input');
select is((select status from pgflow.step_states where step_slug = 'maybe'), 'skipped', '(maybe was skipped by its condition)');

select pgflow.complete_task(:'run', 'a', 0, '{"x": 1}');
select pgflow.complete_task(:'run', 'b', 0, '"text"');
select results_eq(
  $$select input, flow_input from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks where step_slug = 'join'),
                                                     '11111111-1111-1111-1111-111111111111')$$,
  $$values ('{"a": {"x": 1}, "b": "text"}'::jsonb, null::jsonb)$$,
  'dependent step: outputs of completed parents by slug; the skipped parent is absent; flow_input NULL');
select is((select output from pgflow.step_states where step_slug = 'b'), '"text"'::jsonb,
          '(outputs come from step_states.output)');

select * from finish();
rollback;
