-- start_flow broadcasts run:started, start_ready_steps step:<slug>:started, on topic
-- pgflow:run:<run_id> with private = false and upstream's payload keys.
begin;
select plan(6);

select pgflow_tests.install_realtime_stub();
select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{"in": 1}') \gset

select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
                  $$values ('run:started'::text), ('step:root_a:started'), ('step:root_b:started')$$,
                  'run:started, then the root steps in step_slug order');
select ok((select bool_and(topic = 'pgflow:run:' || :'run' and private = false) from realtime.messages),
          'topic pgflow:run:<run_id>, private = false');
select is((select payload from realtime.messages where event = 'run:started'),
          (select jsonb_build_object('event_type', 'run:started', 'run_id', r.run_id, 'flow_slug', 'two_roots',
                                     'status', 'started', 'input', '{"in": 1}'::jsonb, 'remaining_steps', 3,
                                     'started_at', r.started_at)
           from pgflow.runs r),
          'run:started payload: event_type, run_id, flow_slug, status, input, remaining_steps, started_at');
select is((select payload from realtime.messages where event = 'step:root_a:started'),
          (select jsonb_build_object('event_type', 'step:started', 'run_id', ss.run_id, 'step_slug', 'root_a',
                                     'status', 'started', 'started_at', ss.started_at, 'remaining_tasks', 1,
                                     'remaining_deps', 0)
           from pgflow.step_states ss where ss.step_slug = 'root_a'),
          'step:started payload: event_type, run_id, step_slug, status, started_at, remaining_tasks, remaining_deps');

select pgflow.create_flow('m');
select pgflow.add_step('m', 'each', step_type => 'map');
select run_id as mrun from pgflow.start_flow('m', '[1, 2, 3]') \gset
select is((select payload->'remaining_tasks' from realtime.messages where event = 'step:each:started'), '3'::jsonb,
          'a map''s remaining_tasks is its task count');
select is((select count(*) from realtime.messages where topic = 'pgflow:run:' || :'mrun'), 2::bigint,
          'each run has its own topic');

select * from finish();
rollback;
