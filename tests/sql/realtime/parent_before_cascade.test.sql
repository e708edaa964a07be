-- A parent's step:completed is sent before everything it causes: condition skips, taskless
-- completions of dependent maps, and dependents starting.
begin;
select plan(1);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('o');
select pgflow.add_step('o', 'root');
select pgflow.add_step('o', 'items', array['root'], step_type => 'map');
select pgflow.add_step('o', 'after_items', array['items'], step_type => 'map');
select pgflow.add_step('o', 'gated', array['root'], required_input_pattern => '{"root": {"go": true}}');
select pgflow.add_step('o', 'leaf', array['after_items', 'gated']);
select run_id as run from pgflow.start_flow('o', '{}') \gset
select count(*) from pgflow_tests.read_and_start('o');
select pgflow.complete_task(:'run', 'root', 0, '[]');

select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
  $$values ('run:started'::text), ('step:root:started'), ('step:root:completed'), ('step:gated:skipped'),
           ('step:items:completed'), ('step:after_items:completed'), ('step:leaf:started')$$,
  'root completes, then its condition skip, the empty-map chain, and the leaf starts');

select * from finish();
rollback;
