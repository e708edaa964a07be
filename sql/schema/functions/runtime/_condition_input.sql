-- The value a step's condition is tested against: the run input for a root step, otherwise
-- {dep_slug: output} of its completed dependencies (skipped ones are absent).
-- PL/pgSQL, not SQL, so its plans are cached (a hot path).
-- Called by: cascade_resolve_conditions, cascade_complete_taskless_steps.
create or replace function pgflow._condition_input(p_run_id uuid, p_flow_slug text, p_step_slug text,
                                        p_deps_count int)
returns jsonb
language plpgsql stable  -- plpgsql, not sql: its plans are cached (a hot path)
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if p_deps_count = 0 then
    return (select r.input from pgflow.runs r where r.run_id = p_run_id);
  end if;
  return coalesce((
    select jsonb_object_agg(d.dep_slug, ds.output)
    from pgflow.deps d
    join pgflow.step_states ds on ds.run_id = p_run_id and ds.step_slug = d.dep_slug
    where d.flow_slug = p_flow_slug and d.step_slug = p_step_slug and ds.status = 'completed'),
    '{}'::jsonb);
end;
$$;
