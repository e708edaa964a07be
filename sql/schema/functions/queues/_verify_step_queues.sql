-- Verifies the private queues of an existing step-queued flow: every queue on its persisted
-- route exists exactly once in pgmq.meta (no case aliases) with both tables, and no other flow
-- routes to it. An owned queue that has gone missing is an error, never
-- recreated: a new queue would restart message ids under existing task snapshots.
-- Other flows' tasks in its queues are not looked for (since 0029): step_tasks has no index for
-- that, so every worker start read the whole task history under the definition lock. The flow's
-- creation checked them (_preflight_step_queues), and since then no other flow could route to
-- its queues (their creation checks this flow's steps).
-- Locks: none (reads); the caller holds the flow's definition lock.
-- Called by: ensure_flow_compiled (verification).
create or replace function pgflow._verify_step_queues(p_flow_slug text) returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_route record;
begin
  for v_route in select s.step_slug, s.queue_name from pgflow.steps s
                 where s.flow_slug = p_flow_slug order by s.step_index loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_route.queue_name and s.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of step "%" of flow "%" is also used by another flow',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'unique_violation';
    end if;
    if not exists (select 1 from pgmq.meta m where lower(m.queue_name) = v_route.queue_name) then
      raise exception 'PGMQ queue "%" of step "%" of flow "%" is missing although the step routes to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or deploy the flow under a new slug',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'undefined_object';
    end if;
    perform pgflow._queue_meta_name(v_route.queue_name);  -- exactly one row and both tables
  end loop;
end;
$$;
