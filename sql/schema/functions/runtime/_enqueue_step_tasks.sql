-- Gives a step that has just been started its tasks: publishes step:started, sends one message
-- per task to the step's queue (delayed by its start_delay) and inserts one queued task row per
-- message that snapshots that queue; announces the work when it is visible at once. No queue
-- DDL happens here. A step a concurrency limit applies to (`p_limited`: its own or its flow's,
-- since 0018) gets 'held' tasks without messages instead (since 0022; before, invisible
-- messages): the commit admits as many as the limits allow and sends their messages
-- (_admit_gated_tasks), highest run priority first (the task carries its run's priority:
-- set_run_priority). When a concurrency key applies (the step's own, else the flow's; since
-- 0019) each task also carries its run's key value and weight, read from the run input
-- (_concurrency_key_of).
-- Locks: the caller holds the run and the step state; task rows -> queue rows.
-- Plans: the insert is planned once per session (plan_cache_mode; since 0016): left to choose,
-- PostgreSQL planned it again on every call, as a custom plan for the task count always looked
-- cheaper than the generic one. It calls send_batch's implementation (the overload with headers
-- and a time), not a SQL wrapper, which would be parsed and planned again on every call.
-- A wait step (`p_wait`, since 0021) gets waiting tasks instead, without messages
-- (_start_waiting_tasks).
-- Called by: start_ready_steps, start_flow_by_slug (root steps it creates started).
create or replace function pgflow._enqueue_step_tasks(p_run pgflow.runs, p_state pgflow.step_states,
                                                      p_queue_name text, p_start_delay int,
                                                      p_limited boolean default false,
                                                      p_wait jsonb default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
declare
  v_key text;
  v_weight real;
begin
  perform pgflow._emit_step_event(p_state.run_id, p_state.flow_slug, p_state.step_slug, p_state.status);
  if p_wait is not null then
    perform pgflow._start_waiting_tasks(p_run, p_state, p_queue_name, p_wait);
    return;
  end if;
  if p_limited then
    select k.key, k.weight into v_key, v_weight
    from pgflow._concurrency_key_of(p_run.flow_slug, p_state.step_slug, p_run.input) k;
  end if;

  if p_limited then
    -- Held tasks have no message until admitted (since 0022). The admission trigger fires on
    -- updates only (an insert trigger cost every start, limited or not): touching one new task
    -- queues this flow's admission at commit.
    insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name,
                                   gate, priority, concurrency_key, key_weight)
    select p_run.flow_slug, p_run.run_id, p_state.step_slug, i, p_queue_name, 'held',
           coalesce((select rp.priority from pgflow.run_priorities rp where rp.run_id = p_run.run_id), 0),
           v_key, v_weight
    from generate_series(0, p_state.initial_tasks - 1) i;
    update pgflow.step_tasks t set message_id = t.message_id
    where t.run_id = p_run.run_id and t.step_slug = p_state.step_slug and t.task_index = 0;
    return;
  end if;

  -- send_batch returns the ids in message order, so ordinality pairs id and task index.
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name)
  select p_run.flow_slug, p_run.run_id, p_state.step_slug, (m.n - 1)::int, m.msg_id, p_queue_name
  from pgmq.send_batch(
         p_queue_name,
         array(select jsonb_build_object('flow_slug', p_run.flow_slug, 'run_id', p_run.run_id,
                                         'step_slug', p_state.step_slug, 'task_index', i)
               from generate_series(0, p_state.initial_tasks - 1) i order by i),
         null::jsonb[],
         clock_timestamp() + make_interval(secs => p_start_delay)) with ordinality as m(msg_id, n);
  if p_start_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;
