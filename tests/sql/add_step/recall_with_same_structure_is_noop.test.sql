-- Calling add_step again with the same structure returns the existing row and changes nothing,
-- not even the runtime options (tune those with UPDATE).
begin;
select plan(5);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select pgflow.add_step('f', 'c', array['a', 'b'], max_attempts => 2, timeout => 10,
                       required_input_pattern => '{"a": 1}', when_unmet => 'fail');

select results_eq(
  $$select step_slug, step_index, deps_count, opt_max_attempts, opt_timeout, opt_start_delay
    from pgflow.add_step('f', 'c', array['b', 'a', 'b'], max_attempts => 9, timeout => 99, start_delay => 5,
                         required_input_pattern => '{"a": 1}', when_unmet => 'fail')$$,
  $$values ('c'::text, 2, 2, 2, 10, null::int)$$,
  'the existing row is returned (deps in any order, duplicates ignored)');
select results_eq(
  $$select step_index, deps_count, opt_max_attempts, opt_timeout, opt_start_delay
    from pgflow.steps where flow_slug = 'f' and step_slug = 'c'$$,
  $$values (2, 2, 2, 10, null::int)$$,
  'options, index and deps_count are unchanged');
select is((select count(*) from pgflow.deps where flow_slug = 'f'), 2::bigint, 'no deps row added');
select is((select count(*) from pgflow.steps where flow_slug = 'f'), 3::bigint, 'no step added');
select lives_ok($$select pgflow.add_step('f', 'a')$$, 'a root step can be re-added as a root step');

select * from finish();
rollback;
