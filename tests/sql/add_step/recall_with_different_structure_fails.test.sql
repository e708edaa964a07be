-- Upstream's add_step re-call adds new edges (possibly a cycle, with a stale deps_count). Ours
-- refuses any structural change with 23505: definitions are immutable, version the slug instead.
begin;
select plan(10);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', array['a']);

select throws_ok($$select pgflow.add_step('f', 'a', array['b'])$$, '23505',
  'Step "a" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
  'adding a dependency to an existing step (would be a cycle a <-> b) fails');
select is((select count(*) from pgflow.deps where flow_slug = 'f'), 1::bigint, 'no edge was added');
select is((select deps_count from pgflow.steps where step_slug = 'a'), 0, 'deps_count is unchanged');

select throws_ok($$select pgflow.add_step('f', 'b')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)', 'removing a dependency fails');
select throws_ok($$select pgflow.add_step('f', 'b', array['a'], step_type => 'map')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'changing the step type fails');
select throws_ok($$select pgflow.add_step('f', 'b', array['a'], required_input_pattern => '{"a": 1}')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'adding a required pattern fails');
select throws_ok($$select pgflow.add_step('f', 'b', array['a'], forbidden_input_pattern => '{"a": 1}')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'adding a forbidden pattern fails');
select throws_ok($$select pgflow.add_step('f', 'b', array['a'], when_unmet => 'skip-cascade')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'changing when_unmet fails');
select throws_ok($$select pgflow.add_step('f', 'b', array['a'], when_exhausted => 'skip')$$, '23505', 'Step "b" already exists in flow "f" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'changing when_exhausted fails');
select results_eq(
  $$select step_slug, step_type, deps_count, when_unmet, when_exhausted, required_input_pattern
    from pgflow.steps where flow_slug = 'f' order by step_index$$,
  $$values ('a'::text, 'single'::text, 0, 'skip'::text, 'fail'::text, null::jsonb),
           ('b', 'single', 1, 'skip', 'fail', null)$$,
  'the definition is exactly as first added');

select * from finish();
rollback;
