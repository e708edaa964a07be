-- Included by the tests of this folder (\i _state.sql): the whole observable state of the core
-- as one jsonb, to compare complete_tasks with complete_task applied one by one. Message ids
-- are left out (PGMQ's sequences do not roll back, so two branches of one transaction number
-- new messages differently); queues are compared by their counts of active and archived
-- messages, events by their per-run sequence (realtime stub).
create function pg_temp.core_state() returns jsonb
language sql as $f$
  select jsonb_build_object(
    'runs', (select jsonb_agg(to_jsonb(r) order by r.run_id) from pgflow.runs r),
    'states', (select jsonb_agg(to_jsonb(s) order by s.run_id, s.step_slug) from pgflow.step_states s),
    'tasks', (select jsonb_agg(to_jsonb(t) - 'message_id' || jsonb_build_object('has_message', t.message_id is not null)
                               order by t.run_id, t.step_slug, t.task_index)
              from pgflow.step_tasks t),
    'queues', (select jsonb_object_agg(q.queue_name, to_jsonb(c))
               from (select distinct s.queue_name from pgflow.steps s) q
               cross join lateral pgflow_tests.queue_counts(q.queue_name) c),
    'events', (select jsonb_agg(jsonb_build_object('topic', m.topic, 'event', m.event, 'payload', m.payload)
                                order by m.topic, m.id)
               from realtime.messages m))
$f$;

-- The rows a batch call returned, as a sorted jsonb array (message ids left out).
create function pg_temp.returned(p_rows pgflow.step_tasks[]) returns jsonb
language sql as $f$
  select coalesce(jsonb_agg(to_jsonb(t) - 'message_id' order by t.run_id, t.step_slug, t.task_index, t.status), '[]')
  from unnest(p_rows) t
$f$;

-- Applies `results` with complete_task (or fail_task) one by one, in (run_id, step_slug,
-- task_index) order: what complete_tasks (fail_tasks) must be equivalent to.
create function pg_temp.one_by_one(p_results jsonb, p_fail boolean) returns pgflow.step_tasks[]
language plpgsql as $f$
declare
  v_rows pgflow.step_tasks[] := '{}';
  r record;
begin
  for r in select (e->>'run_id')::uuid as run_id, e->>'step_slug' as step_slug,
                  (e->>'task_index')::int as task_index, e->'output' as output,
                  e->>'error_message' as error_message
           from jsonb_array_elements(p_results) with ordinality x(e, pos)
           order by 1, 2, 3, x.pos loop
    if p_fail then
      v_rows := v_rows || array(select t from pgflow.fail_task(r.run_id, r.step_slug, r.task_index, r.error_message) t);
    else
      v_rows := v_rows || array(select t from pgflow.complete_task(r.run_id, r.step_slug, r.task_index, r.output) t);
    end if;
  end loop;
  return v_rows;
end;
$f$;
