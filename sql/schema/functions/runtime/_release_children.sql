-- After parents completed or were skipped: their created children lose one pending dependency
-- per parent; a map child whose task count is still unknown takes it from `p_map_tasks` (NULL
-- keeps it unknown). PL/pgSQL, not SQL, so its plan is cached (a hot path).
-- Locks: the caller holds the run; child step states.
-- Called by: complete_task, cascade_resolve_conditions, cascade_complete_taskless_steps, _fail_task.
create or replace function pgflow._release_children(p_run_id uuid, p_flow_slug text, p_parents text[],
                                         p_map_tasks int, p_set_map_tasks boolean)
returns void
language plpgsql volatile  -- plpgsql, not sql: its plan is cached (a hot path)
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  update pgflow.step_states c
  set remaining_deps = c.remaining_deps - x.n,
      initial_tasks = case when p_set_map_tasks and cs.step_type = 'map' then p_map_tasks
                           else c.initial_tasks end
  from (select d.step_slug, count(*)::int as n
        from pgflow.deps d
        where d.flow_slug = p_flow_slug and d.dep_slug = any(p_parents)
        group by d.step_slug) x,
       pgflow.steps cs
  where c.run_id = p_run_id and c.step_slug = x.step_slug and c.status = 'created'
    and cs.flow_slug = p_flow_slug and cs.step_slug = x.step_slug;
end;
$$;
