-- Skips the step and all its transitive dependents that are still created or started, ends
-- their tasks as `skipped` and archives their messages (in every task queue). Returns how
-- many steps it skipped (0 when called again).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (skip-cascade), _fail_task (when_exhausted skip-cascade).
create or replace function pgflow._cascade_force_skip_steps(run_id uuid, step_slug text, skip_reason text)
returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_slugs text[];
begin
  select r.flow_slug into v_flow from pgflow.runs r where r.run_id = _cascade_force_skip_steps.run_id;
  if not found then
    raise exception 'Run not found: %', _cascade_force_skip_steps.run_id using errcode = 'no_data_found';
  end if;

  with recursive affected(slug) as (
    select _cascade_force_skip_steps.step_slug
    union
    select d.step_slug from pgflow.deps d join affected a on d.dep_slug = a.slug
    where d.flow_slug = v_flow)
  select array_agg(ss.step_slug order by s.step_index) into v_slugs
  from pgflow.step_states ss
  join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
  where ss.run_id = _cascade_force_skip_steps.run_id
    and ss.step_slug in (select a.slug from affected a)
    and ss.status in ('created', 'started');
  if v_slugs is null then
    return 0;
  end if;

  update pgflow.step_states ss
  set status = 'skipped', skipped_at = greatest(now(), ss.created_at), remaining_tasks = null,
      skip_reason = case when ss.step_slug = _cascade_force_skip_steps.step_slug
                         then _cascade_force_skip_steps.skip_reason else 'dependency_skipped' end
  where ss.run_id = _cascade_force_skip_steps.run_id and ss.step_slug = any(v_slugs);

  perform pgflow._emit_step_events(_cascade_force_skip_steps.run_id, v_slugs);

  perform pgflow._terminate_tasks(_cascade_force_skip_steps.run_id, v_slugs, 'skipped');
  update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
  where r.run_id = _cascade_force_skip_steps.run_id;
  return cardinality(v_slugs);
end;
$$;
