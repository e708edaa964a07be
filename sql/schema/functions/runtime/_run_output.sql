-- A completed run's output: {leaf_slug: output} of its completed leaf steps (steps no other
-- step depends on); NULL when none completed.
-- Called by: maybe_complete_run, complete_tasks.
create or replace function pgflow._run_output(p_run_id uuid) returns jsonb
language plpgsql stable  -- plpgsql, not sql: its plan is cached (a hot path)
set search_path = pg_catalog, pg_temp
as $$
begin
  return (select jsonb_object_agg(ss.step_slug, ss.output)
          from pgflow.step_states ss
          where ss.run_id = p_run_id and ss.status = 'completed'
            and not exists (select 1 from pgflow.deps d
                            where d.flow_slug = ss.flow_slug and d.dep_slug = ss.step_slug));
end;
$$;
