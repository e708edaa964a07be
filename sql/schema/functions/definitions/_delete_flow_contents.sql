-- Empties a flow - its runs, steps and private queues - and keeps its identity row (and so its
-- alias membership and activation), in one transaction, following seed 000's deletion steps:
--   1. lock the flow identity; collect and validate its route (the distinct steps.queue_name:
--      the private step queues in queue mode `step`; plus, in mode `flow`, an owned default
--      queue lower(flow_slug) of a flow without steps), the task snapshots, the exact
--      pgmq.meta spelling and both tables of each queue, and that no other flow references
--      them;
--   2. lock its runs (run_id order), like callbacks and recovery do;
--   3. delete runtime rows and step definitions, keeping the flow row and the validated names;
--   4. drop exactly those queues (with their archives): no per-message archiving first.
-- Anything missing, ambiguous, malformed or referenced elsewhere fails the whole call.
-- Locks: definition lock -> flow row FOR NO KEY UPDATE -> runs FOR UPDATE -> (deletes) -> queues.
-- Called by: delete_flow_and_data (then step 5: the flow row), ensure_flow_compiled (local
-- recompilation, then the new definition).
create or replace function pgflow._delete_flow_contents(p_flow_slug text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_route text[];
  v_stray text;
  v_queue text;
  v_spellings text[] := '{}';
begin
  perform pgflow._lock_flow_definition(p_flow_slug);
  -- NO KEY UPDATE, not UPDATE: callbacks holding a run lock take FOR KEY SHARE on this row
  -- (foreign-key checks of step_states/step_tasks), so FOR UPDATE here would deadlock with
  -- them while this waits for their runs below.
  select * into v_flow from pgflow.flows f where f.flow_slug = p_flow_slug for no key update;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;

  v_route := array(select distinct s.queue_name from pgflow.steps s
                   where s.flow_slug = p_flow_slug order by 1);
  -- Only a flow in queue mode `flow` has a default queue; without steps it owns that queue
  -- only if the queue was created together with the flow.
  if v_flow.queue_mode = 'flow' and not lower(p_flow_slug) = any(v_route) and exists (
       select 1 from pgmq.meta m
       where lower(m.queue_name) = lower(p_flow_slug) and m.created_at = v_flow.created_at) then
    v_route := v_route || lower(p_flow_slug);
  end if;

  -- A flow's tasks and step states are reached through its runs (no index by flow since 0015).
  select t.queue_name into v_stray
  from pgflow.runs r join pgflow.step_tasks t on t.run_id = r.run_id
  where r.flow_slug = p_flow_slug and t.flow_slug = p_flow_slug and not t.queue_name = any(v_route)
  limit 1;
  if found then
    raise exception 'Flow "%" has tasks in queue "%", which is not on its route; refusing to delete',
      p_flow_slug, v_stray using errcode = 'object_in_use';
  end if;
  foreach v_queue in array v_route loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
       or exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of flow "%" is also referenced by another flow; refusing to drop it',
        v_queue, p_flow_slug using errcode = 'object_in_use';
    end if;
    v_spellings := v_spellings || pgflow._queue_meta_name(v_queue);
  end loop;

  perform 1 from pgflow.runs r where r.flow_slug = p_flow_slug order by r.run_id for update;
  delete from pgflow.step_tasks t using pgflow.runs r
  where r.flow_slug = p_flow_slug and t.run_id = r.run_id and t.flow_slug = p_flow_slug;
  delete from pgflow.step_states s using pgflow.runs r
  where r.flow_slug = p_flow_slug and s.run_id = r.run_id and s.flow_slug = p_flow_slug;
  delete from pgflow.runs r where r.flow_slug = p_flow_slug;
  delete from pgflow.deps d where d.flow_slug = p_flow_slug;
  delete from pgflow.steps s where s.flow_slug = p_flow_slug;
  foreach v_queue in array v_spellings loop
    perform pgmq.drop_queue(v_queue);
  end loop;
end;
$$;
