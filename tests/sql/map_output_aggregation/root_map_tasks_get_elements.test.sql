-- Root map task i receives element i of the run input, unwrapped (null elements included),
-- and no flow_input.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[{"id": 1}, null, "s", [1]]') \gset

select results_eq($$select t.task_index, t.input, t.flow_input from pgflow_tests.read_and_start('f', 30, 10) t order by t.task_index$$,
                  $$values (0, '{"id": 1}'::jsonb, null::jsonb), (1, 'null', null), (2, '"s"', null), (3, '[1]', null)$$,
                  'element i for task i');

select * from finish();
rollback;
