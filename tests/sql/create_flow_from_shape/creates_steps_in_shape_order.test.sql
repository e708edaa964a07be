-- _create_flow_from_shape creates the flow, its queue and the steps in array order with their
-- types and dependencies.
begin;
select plan(5);

select pgflow._create_flow_from_shape('shaped', jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('load'),
  pgflow_tests.step_shape('items', array['load'], 'map'),
  pgflow_tests.step_shape('other'),
  pgflow_tests.step_shape('report', array['other', 'items']))));

select is((select count(*) from pgflow.flows where flow_slug = 'shaped'), 1::bigint, 'the flow exists');
select ok(exists (select 1 from pgmq.list_queues() where queue_name = 'shaped'), 'its queue exists');
select results_eq(
  $$select step_slug, step_type, step_index, deps_count from pgflow.steps where flow_slug = 'shaped'
    order by step_index$$,
  $$values ('load'::text, 'single'::text, 0, 0), ('items', 'map', 1, 1), ('other', 'single', 2, 0),
           ('report', 'single', 3, 2)$$,
  'steps follow the array order, with their types and dependency counts');
select results_eq(
  $$select dep_slug, step_slug from pgflow.deps where flow_slug = 'shaped' order by step_slug, dep_slug$$,
  $$values ('load'::text, 'items'::text), ('items', 'report'), ('other', 'report')$$,
  'the dependencies are stored');
select is(pgflow._get_flow_shape('shaped'), jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('load'),
  pgflow_tests.step_shape('items', array['load'], 'map'),
  pgflow_tests.step_shape('other'),
  pgflow_tests.step_shape('report', array['other', 'items']))),
  'reading the shape back gives the same shape');

select * from finish();
rollback;
