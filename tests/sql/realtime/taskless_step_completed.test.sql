-- A taskless step (a map over an empty array) broadcasts step:<slug>:completed from the
-- taskless cascade, with started_at, completed_at, remaining_tasks 0, remaining_deps 0 and output [].
begin;
select plan(2);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('e');
select pgflow.add_step('e', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('e', '[]') \gset

select is((select payload from realtime.messages where event = 'step:items:completed'),
          (select jsonb_build_object('event_type', 'step:completed', 'run_id', ss.run_id, 'step_slug', 'items',
                                     'status', 'completed', 'started_at', ss.started_at, 'completed_at', ss.completed_at,
                                     'remaining_tasks', 0, 'remaining_deps', 0, 'output', '[]'::jsonb)
           from pgflow.step_states ss),
          'taskless step:completed payload');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
                  $$values ('run:started'::text), ('step:items:completed'), ('run:completed')$$,
                  'run:started, the taskless completion, run:completed');

select * from finish();
rollback;
