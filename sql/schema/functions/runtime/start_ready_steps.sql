-- Starts every ready step with a known, positive task count (in step_slug order), and gives each
-- its tasks and messages (_enqueue_step_tasks). Once all are started, the waits among them
-- (since 0021) take the signals buffered for them and complete if already due (_settle_waits).
-- Locks: the caller holds the run; step states FOR UPDATE -> task rows -> queue rows.
-- Called by: _advance_run.
create or replace function pgflow.start_ready_steps(run_id uuid) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step record;
  v_waits boolean := false;
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
      set status = 'started', started_at = greatest(now(), ss.created_at), remaining_tasks = ss.initial_tasks
      from ready
      where ss.run_id = v_run.run_id and ss.step_slug = ready.step_slug
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name,
           s.concurrency_limited, s.wait
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay,
                                       v_step.concurrency_limited, v_step.wait);
    v_waits := v_waits or v_step.wait is not null;
  end loop;
  if v_waits then
    perform pgflow._settle_waits(v_run.run_id);
  end if;
end;
$$;
