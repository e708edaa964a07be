-- Map steps: root or with exactly one dependency; more than one dependency is an error.
begin;
select plan(6);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');

select results_eq($$select step_type, deps_count from pgflow.add_step('f', 'root_map', step_type => 'map')$$,
                  $$values ('map'::text, 0)$$, 'a root map step');
select results_eq($$select step_type, deps_count from pgflow.add_step('f', 'dep_map', array['a'], step_type => 'map')$$,
                  $$values ('map'::text, 1)$$, 'a map step with one dependency');
select throws_ok($$select pgflow.add_step('f', 'bad_map', array['a', 'b'], step_type => 'map')$$, 'P0001',
  'Map step "bad_map" can have at most one dependency, but 2 were provided: a, b',
  'a map step with two dependencies is rejected with upstream''s message');
select is((select count(*) from pgflow.steps where step_slug = 'bad_map'), 0::bigint,
          'the rejected map step was not stored');
select results_eq($$select step_type, deps_count from pgflow.add_step('f', 'fan_in', array['root_map', 'dep_map'])$$,
                  $$values ('single'::text, 2)$$, 'a single step may depend on several maps');
select results_eq($$select step_type, deps_count from pgflow.add_step('f', 'map_of_map', array['dep_map'], step_type => 'map')$$,
                  $$values ('map'::text, 1)$$, 'a map may depend on a map');

select * from finish();
rollback;
