-- Shapes written by older upstream DSL versions omit whenUnmet, whenExhausted and the input
-- patterns: they compile with upstream's defaults (skip, fail, not defined), verify against the
-- flow they compiled (and against the same flow's current shape), and an explicit value that
-- differs from what is stored is still a difference.
begin;
select plan(8);

set local pgflow.local = 'off';

-- A step as an older DSL wrote it: no whenUnmet/whenExhausted/patterns.
create function pg_temp.legacy(slug text, deps text[] default '{}', step_type text default 'single') returns jsonb
language sql immutable as $$
  select pgflow_tests.step_shape(slug, deps, step_type)
         - 'whenUnmet' - 'whenExhausted' - 'requiredInputPattern' - 'forbiddenInputPattern'
$$;

select is(pgflow.ensure_flow_compiled('legacy', jsonb_build_object('steps', jsonb_build_array(
    pg_temp.legacy('fetch'), pg_temp.legacy('each', array['fetch'], 'map'))), pgflow.worker_protocol())->>'status',
  'compiled', 'a legacy shape compiles');
select results_eq($$select step_slug, when_unmet, when_exhausted, required_input_pattern is null, forbidden_input_pattern is null
                    from pgflow.steps where flow_slug = 'legacy' order by step_index$$,
                  $$values ('fetch'::text, 'skip'::text, 'fail'::text, true, true), ('each', 'skip', 'fail', true, true)$$,
                  'its steps get the defaults: skip when unmet, fail when exhausted, no patterns');
select is(pgflow.ensure_flow_compiled('legacy', jsonb_build_object('steps', jsonb_build_array(
    pg_temp.legacy('fetch'), pg_temp.legacy('each', array['fetch'], 'map'))), pgflow.worker_protocol())
    - 'routes' - 'queue_name' - 'queue_mode' - 'flow_alias' - 'activation' - 'active_flow_slug' - 'flow_control',
  '{"status": "verified", "differences": [], "mismatchKind": null}'::jsonb,
  'the same legacy shape verifies against it');
select is(pgflow.ensure_flow_compiled('legacy', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('fetch'), pgflow_tests.step_shape('each', array['fetch'], 'map'))), pgflow.worker_protocol())->>'status',
  'verified', 'and so does the current shape of the same flow');
select is(pgflow.ensure_flow_compiled('legacy', jsonb_build_object('steps', jsonb_build_array(
    pg_temp.legacy('fetch') || '{"whenExhausted": "skip"}', pg_temp.legacy('each', array['fetch'], 'map'))),
    pgflow.worker_protocol())->'differences',
  '["Step at index 0: whenExhausted differs ''skip'' vs ''fail''"]'::jsonb,
  'an explicit value that differs is a difference');

-- A current flow verifies against the legacy form of its shape.
select pgflow_tests.setup_flow('sequential');
select is(pgflow.ensure_flow_compiled('sequential', jsonb_build_object('steps', jsonb_build_array(
    pg_temp.legacy('first'), pg_temp.legacy('second', array['first']), pg_temp.legacy('last', array['second']))),
    pgflow.worker_protocol())->>'status',
  'verified', 'a flow compiled from a current shape verifies against its legacy form');

-- The defaults never replace values that are present.
select is(pgflow._with_shape_defaults(jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('a', when_unmet => 'fail', when_exhausted => 'skip-cascade', required => '{"x": 1}')))),
  jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('a', when_unmet => 'fail', when_exhausted => 'skip-cascade', required => '{"x": 1}'))),
  'a current shape comes back unchanged');
select throws_ok($$select pgflow.ensure_flow_compiled('legacy2', jsonb_build_object('steps', jsonb_build_array(
    pg_temp.legacy('a') || '{"whenUnmet": "sometimes"}')), pgflow.worker_protocol())$$, '23514',
  'new row for relation "steps" violates check constraint "when_unmet_is_valid"',
  'a present but invalid mode is still rejected');

select * from finish();
rollback;
