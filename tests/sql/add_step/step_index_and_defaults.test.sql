-- add_step stores a step with upstream's defaults and numbers steps in insertion order.
begin;
select plan(5);

select pgflow.create_flow('f');
select results_eq(
  $$select flow_slug, step_slug, step_type, step_index, deps_count, opt_max_attempts, opt_base_delay,
           opt_timeout, opt_start_delay, required_input_pattern, forbidden_input_pattern,
           when_unmet, when_exhausted
    from pgflow.add_step('f', 'first')$$,
  $$values ('f'::text, 'first'::text, 'single'::text, 0, 0, null::int, null::int, null::int, null::int,
            null::jsonb, null::jsonb, 'skip'::text, 'fail'::text)$$,
  'returns the new row: single, index 0, no deps, options NULL (inherit), skip / fail');
select pgflow.add_step('f', 'second', array['first']);
select pgflow.add_step('f', 'third');
select results_eq(
  $$select step_slug, step_index from pgflow.steps where flow_slug = 'f' order by step_index$$,
  $$values ('first'::text, 0), ('second', 1), ('third', 2)$$,
  'step_index is the insertion order, whether or not the step has deps');

select pgflow.create_flow('other');
select is((select step_index from pgflow.add_step('other', 'only')), 0,
          'step_index counts per flow');
select is((select step_type from pgflow.add_step('f', 'null_type', step_type => null)), 'single',
          'a NULL step_type becomes single');
select throws_ok($$select pgflow.add_step('f', 'bad_type', step_type => 'batch')$$, '23514',
  'new row for relation "steps" violates check constraint "steps_step_type_check"',
  'an unknown step_type fails steps_step_type_check');

select * from finish();
rollback;
