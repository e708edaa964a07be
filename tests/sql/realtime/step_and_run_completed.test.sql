-- complete_task broadcasts step:<slug>:completed (with the stored output) when a step
-- completes, and maybe_complete_run broadcasts run:completed with the run output.
begin;
select plan(5);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('c');
select pgflow.add_step('c', 'each', step_type => 'map');
select pgflow.add_step('c', 'sum', array['each']);
select run_id as run from pgflow.start_flow('c', '[1, 2]') \gset
select pgflow_tests.ensure_worker('c');
select count(*) from pgflow.start_tasks('c', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
select pgflow.complete_task(:'run', 'each', 1, '"b"');
select is((select count(*) from realtime.messages where event like 'step:each:completed'), 0::bigint,
          'no event while the map still has tasks');
select pgflow.complete_task(:'run', 'each', 0, '"a"');

select is((select payload from realtime.messages where event = 'step:each:completed'),
          (select jsonb_build_object('event_type', 'step:completed', 'run_id', ss.run_id, 'step_slug', 'each',
                                     'status', 'completed', 'output', '["a", "b"]'::jsonb, 'completed_at', ss.completed_at)
           from pgflow.step_states ss where ss.step_slug = 'each'),
          'step:completed payload: event_type, run_id, step_slug, status, output (aggregated), completed_at');

select count(*) from pgflow.start_tasks('c', array(select message_id from pgflow.step_tasks where step_slug = 'sum'),
                                        '11111111-1111-1111-1111-111111111111');
select pgflow.complete_task(:'run', 'sum', 0, '{"total": 2}');
select is((select payload from realtime.messages where event = 'run:completed'),
          (select jsonb_build_object('event_type', 'run:completed', 'run_id', r.run_id, 'flow_slug', 'c',
                                     'status', 'completed', 'output', '{"sum": {"total": 2}}'::jsonb,
                                     'completed_at', r.completed_at)
           from pgflow.runs r),
          'run:completed payload: event_type, run_id, flow_slug, status, output, completed_at');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$') offset 2$$,
                  $$values ('step:each:completed'::text), ('step:sum:started'), ('step:sum:completed'), ('run:completed')$$,
                  'order: completion, the dependent''s start, its completion, the run');
select is((select count(*) from realtime.messages where event = 'run:completed'), 1::bigint, 'run:completed is sent once');

select * from finish();
rollback;
