-- Evaluates the conditions of every step that just became ready, until nothing changes:
-- `fail` fails the step and the run, `skip` skips the step (its dependents run without it),
-- `skip-cascade` skips it and everything downstream. Returns false when a `fail` condition
-- failed the run, true otherwise.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_resolve_conditions(run_id uuid) returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_failing text[];
  v_skipped text[];
  v_cascading text[];
  v_cascaded int;
  v_state pgflow.step_states;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_resolve_conditions.run_id;
    if not found or v_run.status <> 'started' then
      return coalesce(v_run.status <> 'failed', true);
    end if;

    -- Unmet conditions among ready steps, by mode, in step order.
    select array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'fail'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip-cascade')
    into v_failing, v_skipped, v_cascading
    from (
      select ss.step_slug, s.when_unmet, s.step_index
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      cross join lateral (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                         s.deps_count) as value) ci
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and (s.required_input_pattern is not null or s.forbidden_input_pattern is not null)
        and not ((s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                 and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern))
    ) x;

    -- 1. `fail`: the first such step fails, and the run with it.
    if v_failing is not null then
      update pgflow.step_states ss
      set status = 'failed', failed_at = greatest(now(), ss.started_at), error_message = 'Condition not met'
      where ss.run_id = v_run.run_id and ss.step_slug = v_failing[1]
      returning * into v_state;
      perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
      perform pgflow._fail_run(v_run.run_id, 'Condition not met');
      return false;
    end if;

    -- 2. `skip`: the steps are skipped; their dependents run without them.
    if v_skipped is not null then
      update pgflow.step_states ss
      set status = 'skipped', skip_reason = 'condition_unmet', skipped_at = greatest(now(), ss.created_at)
      where ss.run_id = v_run.run_id and ss.step_slug = any(v_skipped);
      perform pgflow._emit_step_events(v_run.run_id, v_skipped);
      -- A map whose only dependency was skipped has nothing to map over: zero tasks.
      perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_skipped, 0, true);
      update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_skipped)
      where r.run_id = v_run.run_id;
    end if;

    -- 3. `skip-cascade`: the steps and everything downstream are skipped.
    v_cascaded := 0;
    for i in 1 .. coalesce(cardinality(v_cascading), 0) loop
      v_cascaded := v_cascaded + pgflow._cascade_force_skip_steps(v_run.run_id, v_cascading[i],
                                                                   'condition_unmet');
    end loop;

    exit when v_skipped is null and v_cascaded = 0;
  end loop;
  return true;
end;
$$;
