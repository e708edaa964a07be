-- Starts every ready step with a known, positive task count: one message per task in the
-- step's queue (delayed by the step's start_delay), one queued task row per message that
-- snapshots that queue. No queue DDL happens here.
-- Locks: the caller holds the run; step states FOR UPDATE -> task rows -> queue rows.
-- Called by: _advance_run.
create or replace function pgflow.start_ready_steps(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step record;
begin
  select * into v_run from pgflow.runs r where r.run_id = start_ready_steps.run_id;
  if not found or v_run.status <> 'started' then
    return;
  end if;

  for v_step in
    with ready as (
      select ss.step_slug
      from pgflow.step_states ss
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and ss.initial_tasks > 0
      order by ss.step_slug
      for update),
    started as (
      update pgflow.step_states ss
      set status = 'started', started_at = now(), remaining_tasks = ss.initial_tasks
      from ready
      where ss.run_id = v_run.run_id and ss.step_slug = ready.step_slug
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._emit_step_event(v_step.state);

    -- send_batch returns the ids in message order, so ordinality pairs id and task index.
    insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name)
    select v_run.flow_slug, v_run.run_id, v_step.step_slug, (m.n - 1)::int, m.msg_id,
           v_step.queue_name
    from pgmq.send_batch(
           v_step.queue_name,
           array(select jsonb_build_object('flow_slug', v_run.flow_slug, 'run_id', v_run.run_id,
                                           'step_slug', v_step.step_slug, 'task_index', i)
                 from generate_series(0, v_step.initial_tasks - 1) i order by i),
           v_step.start_delay) with ordinality as m(msg_id, n);
    if v_step.start_delay = 0 then
      perform pgflow._announce_work(v_step.queue_name);
    end if;
  end loop;
end;
$$;
