-- Dependencies become deps rows and deps_count; unknown or self dependencies fail their constraints.
begin;
select plan(8);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select is((select deps_count from pgflow.add_step('f', 'c', array['b', 'a'])), 2,
          'deps_count is the number of dependencies');
select results_eq(
  $$select dep_slug, step_slug from pgflow.deps where flow_slug = 'f' order by dep_slug$$,
  $$values ('a'::text, 'c'::text), ('b', 'c')$$,
  'one deps row per dependency (dep_slug = parent, step_slug = child)');
select is((select deps_count from pgflow.add_step('f', 'd', array['a', 'a'])), 1,
          'a dependency listed twice counts once');
select is((select deps_count from pgflow.add_step('f', 'e', null)), 0,
          'NULL deps_slugs means no dependencies');

select throws_ok($$select pgflow.add_step('f', 'x', array['nope'])$$, '23503',
  'insert or update on table "deps" violates foreign key constraint "deps_flow_slug_dep_slug_fkey"',
  'an unknown dependency fails deps_flow_slug_dep_slug_fkey');
select throws_ok($$select pgflow.add_step('f', 'x', array['x'])$$, '23514',
  'new row for relation "deps" violates check constraint "deps_check"',
  'a self-dependency fails deps_check');
select is((select count(*) from pgflow.steps where step_slug = 'x'), 0::bigint,
          'the failed calls left no step behind');

select pgflow.create_flow('g');
select pgflow.add_step('g', 'a');
select throws_ok($$select pgflow.add_step('f', 'y', array['only_in_g'])$$, '23503',
  'insert or update on table "deps" violates foreign key constraint "deps_flow_slug_dep_slug_fkey"',
  'a dependency must be a step of the same flow');

select * from finish();
rollback;
