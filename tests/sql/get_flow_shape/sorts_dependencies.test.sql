-- dependencies are sorted alphabetically, whatever order they were added in.
begin;
select plan(1);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'zeta');
select pgflow.add_step('f', 'alpha');
select pgflow.add_step('f', 'mid');
select pgflow.add_step('f', 'join', array['zeta', 'mid', 'alpha']);

select is(pgflow._get_flow_shape('f')->'steps'->3->'dependencies', '["alpha", "mid", "zeta"]'::jsonb,
          'dependencies are in alphabetical order');

select * from finish();
rollback;
