-- Sends queued tasks their messages, one each, to one queue, in the order given (a claim reads
-- in message order), visible after p_delay seconds; records each task's message id, and a held
-- task that gets its message is admitted with it (held tasks have no message: since 0022).
-- Announces the work when it is visible at once. The tasks of a started step get theirs as
-- they are inserted (_enqueue_step_tasks, planned once per session); this sends messages to
-- tasks that exist already.
-- Locks: the caller holds the task rows; the messages are new queue rows.
-- Called by: _admit_tasks (admitted tasks), resume_run (tasks queued again).
create or replace function pgflow._send_task_messages(p_queue_name text, p_flow_slug text,
                                                      p_runs uuid[], p_slugs text[], p_indexes int[],
                                                      p_delay int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_messages bigint[];
begin
  -- send_batch returns the ids in message order, so ordinality pairs each id with its task.
  -- (The tasks are updated from arrays, probed by key: joined with send_batch's result, which
  -- the planner estimates at 1,000 rows, the update could scan step_tasks.)
  v_messages := array(
    select m.msg_id
    from pgmq.send_batch(
           p_queue_name,
           array(select jsonb_build_object('flow_slug', p_flow_slug, 'run_id', x.run_id,
                                           'step_slug', x.step_slug, 'task_index', x.task_index)
                 from unnest(p_runs, p_slugs, p_indexes) with ordinality x(run_id, step_slug, task_index, n)
                 order by x.n),
           null::jsonb[],
           clock_timestamp() + make_interval(secs => p_delay)) with ordinality m(msg_id, n)
    order by m.n);
  update pgflow.step_tasks t
  set message_id = u.msg_id,
      gate = case when t.gate = 'held' then 'admitted' else t.gate end
  from unnest(p_runs, p_slugs, p_indexes, v_messages) u(run_id, step_slug, task_index, msg_id)
  where t.run_id = u.run_id and t.step_slug = u.step_slug and t.task_index = u.task_index;
  if p_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;
