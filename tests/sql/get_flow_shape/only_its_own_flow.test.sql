-- The shape contains only the steps and dependencies of the requested flow.
begin;
select plan(2);

select pgflow_tests.setup_flow('sequential');
select pgflow_tests.setup_flow('sequential_other');
select pgflow.add_step('other', 'extra', array['first', 'last']);

select is(jsonb_array_length(pgflow._get_flow_shape('sequential')->'steps'), 3, 'three steps');
select is(pgflow._get_flow_shape('other')->'steps'->3->'dependencies', '["first", "last"]'::jsonb,
          'dependencies of the same slugs in another flow do not leak in');

select * from finish();
rollback;
