-- Condition patterns and the when_unmet / when_exhausted modes: stored, checked by named constraints.
begin;
select plan(12);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select results_eq(
  $$select required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted
    from pgflow.add_step('f', 'cond', array['a'],
                         required_input_pattern => '{"a": {"ok": true}}',
                         forbidden_input_pattern => '{"a": {"skip": true}}',
                         when_unmet => 'skip-cascade', when_exhausted => 'skip')$$,
  $$values ('{"a": {"ok": true}}'::jsonb, '{"a": {"skip": true}}'::jsonb, 'skip-cascade'::text, 'skip'::text)$$,
  'patterns and modes are stored');
select is((select when_unmet from pgflow.add_step('f', 'unmet_fail', when_unmet => 'fail')), 'fail',
          'when_unmet fail');
select is((select when_exhausted from pgflow.add_step('f', 'exh_cascade', when_exhausted => 'skip-cascade')),
          'skip-cascade', 'when_exhausted skip-cascade');
select is((select required_input_pattern from pgflow.add_step('f', 'empty_pattern', required_input_pattern => '{}')),
          '{}'::jsonb, 'an empty object is a valid pattern');

select throws_ok($$select pgflow.add_step('f', 'x', required_input_pattern => '[1]')$$, '23514',
  'new row for relation "steps" violates check constraint "required_input_pattern_is_object"',
  'a required pattern must be an object');
select throws_ok($$select pgflow.add_step('f', 'x', forbidden_input_pattern => '"str"')$$, '23514',
  'new row for relation "steps" violates check constraint "forbidden_input_pattern_is_object"',
  'a forbidden pattern must be an object');
select throws_ok($$select pgflow.add_step('f', 'x', required_input_pattern => 'null')$$, '23514',
  'new row for relation "steps" violates check constraint "required_input_pattern_is_object"',
  'JSON null is not an object pattern');
select throws_ok($$select pgflow.add_step('f', 'x', when_unmet => 'ignore')$$, '23514',
  'new row for relation "steps" violates check constraint "when_unmet_is_valid"',
  'an unknown when_unmet');
select throws_ok($$select pgflow.add_step('f', 'x', when_exhausted => 'retry')$$, '23514',
  'new row for relation "steps" violates check constraint "when_exhausted_is_valid"',
  'an unknown when_exhausted');
select throws_ok($$select pgflow.add_step('f', 'x', when_unmet => null)$$, '23502', 'null value in column "when_unmet" of relation "steps" violates not-null constraint',
  'a NULL when_unmet is inserted as-is and violates NOT NULL (as upstream)');
select throws_ok($$select pgflow.add_step('f', 'x', when_exhausted => null)$$, '23502', 'null value in column "when_exhausted" of relation "steps" violates not-null constraint',
  'a NULL when_exhausted violates NOT NULL');
select is((select count(*) from pgflow.steps where step_slug = 'x'), 0::bigint, 'no invalid step stored');

select * from finish();
rollback;
