-- Completes ready steps that have no tasks (maps over empty arrays), wave after wave, and
-- releases their dependents. Returns how many steps it completed. Each wave completes at
-- least one step, so the loop ends after at most as many waves as the flow has steps.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_complete_taskless_steps(run_id uuid) returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_slugs text[];
  v_total int := 0;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_complete_taskless_steps.run_id;
    exit when not found or v_run.status <> 'started';

    select array_agg(ss.step_slug order by s.step_index) into v_slugs
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
      and ss.initial_tasks = 0
      -- A step whose condition is unmet is left to cascade_resolve_conditions, which
      -- _advance_run runs again after every call that completed something.
      and ((s.required_input_pattern is null and s.forbidden_input_pattern is null)
           or (select (s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                      and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern)
               from (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                    s.deps_count) as value) ci));
    exit when v_slugs is null;

    update pgflow.step_states ss
    set status = 'completed', started_at = greatest(now(), ss.created_at), completed_at = greatest(now(), ss.created_at), remaining_tasks = 0,
        output = case when s.step_type = 'map' then '[]'::jsonb end
    from pgflow.steps s
    where ss.run_id = v_run.run_id and ss.step_slug = any(v_slugs)
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug;

    perform pgflow._emit_step_events(v_run.run_id, v_slugs);

    -- An empty map's dependent map maps over that empty array: zero tasks as well.
    perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_slugs, 0, true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
    where r.run_id = v_run.run_id;
    v_total := v_total + cardinality(v_slugs);
  end loop;
  return v_total;
end;
$$;
