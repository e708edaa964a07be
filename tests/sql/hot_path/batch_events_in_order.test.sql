-- complete_tasks publishes a batch's events in one call (_emit_events, since 0015): each
-- completed step's step:<slug>:completed, then each completed run's run:completed (runs in
-- run_id order), with the payloads single results broadcast; pgflow_events notifications are
-- sent for the same events (the broadcast stub sees the same order; pg_notify order is
-- asserted by the C++ event tests).
begin;
select plan(5);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('b');
select pgflow.add_step('b', 'only');
select pgflow_tests.ensure_worker('b');
select count(*) from (select pgflow.start_flow('b', jsonb_build_object('n', i)) from generate_series(1, 3) i) x;
create temp table batch as
select c.run_id, c.step_slug, c.task_index
from pgflow.claim_tasks('b', 'b', array(select m.msg_id from pgmq.read('b', 60, 10) m),
                        '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c
where c.outcome = 'claimed';
select is((select count(*)::int from batch), 3, 'three tasks claimed');
select id as before from realtime.messages order by id desc limit 1 \gset

select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', run_id, 'step_slug', step_slug, 'task_index', task_index,
                                      'output', jsonb_build_object('done', true)))
  from batch));

select results_eq(
  format($$select event, (payload->>'run_id')::uuid from realtime.messages where id > %s order by id$$, :before),
  $$select 'step:only:completed'::text, run_id from (select run_id from batch order by run_id) x
    union all
    select 'run:completed', run_id from (select run_id from batch order by run_id) y$$,
  'the steps'' events, then the runs'', each in run_id order');
select is((select count(*)::int from realtime.messages where id > :before and event = 'step:only:completed'
           and payload = (select jsonb_build_object('event_type', 'step:completed', 'run_id', ss.run_id,
                                                    'step_slug', 'only', 'status', 'completed',
                                                    'output', '{"done": true}'::jsonb, 'completed_at', ss.completed_at)
                          from pgflow.step_states ss where ss.run_id = (realtime.messages.payload->>'run_id')::uuid)),
          3, 'step:completed payloads as a single result broadcasts them');
select is((select count(*)::int from realtime.messages where id > :before and event = 'run:completed'
           and payload = (select jsonb_build_object('event_type', 'run:completed', 'run_id', r.run_id,
                                                    'flow_slug', 'b', 'status', 'completed',
                                                    'output', '{"only": {"done": true}}'::jsonb,
                                                    'completed_at', r.completed_at)
                          from pgflow.runs r where r.run_id = (realtime.messages.payload->>'run_id')::uuid)),
          3, 'run:completed payloads with the run output');
select is((select count(distinct topic)::int from realtime.messages where id > :before), 3,
          'each run''s events on its own topic');

select * from finish();
rollback;
