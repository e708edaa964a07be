-- Adds a wait step (since 0021): a step without a handler whose tasks wait for a signal
-- (pgflow.send_signal) or sleep, as `wait` says (_wait_problem lists the forms). Otherwise as
-- add_step: `step_type` 'map' waits once per element, `when_exhausted` decides what a timed-out
-- wait does to the run (fail it, skip the step, or skip it and everything downstream).
-- Locks: the flow's definition lock; then what _add_step takes.
-- Called by: SQL users building a flow by hand (the C++ DSL compiles its wait steps through
-- ensure_flow_compiled).
create or replace function pgflow.add_wait_step(
  flow_slug text,
  step_slug text,
  wait jsonb,
  deps_slugs text[] default '{}',
  step_type text default 'single',
  when_unmet text default 'skip',
  when_exhausted text default 'fail'
) returns pgflow.steps
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if add_wait_step.wait is null then
    raise exception 'Wait step "%" of flow "%" needs a wait: {"kind": "signal"} or {"kind": "sleep", ...}',
      add_wait_step.step_slug, add_wait_step.flow_slug using errcode = 'null_value_not_allowed';
  end if;
  perform pgflow._lock_flow_definition(add_wait_step.flow_slug);
  perform pgflow._refuse_step_queued_flow(add_wait_step.flow_slug, 'add_wait_step');
  return pgflow._add_step(
    flow_slug => add_wait_step.flow_slug, step_slug => add_wait_step.step_slug,
    deps_slugs => add_wait_step.deps_slugs, step_type => add_wait_step.step_type,
    when_unmet => add_wait_step.when_unmet, when_exhausted => add_wait_step.when_exhausted,
    wait => add_wait_step.wait);
end;
$$;
