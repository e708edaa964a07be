-- Upstream's building block: adds a step routed to the flow's generated queue lower(flow_slug)
-- (see _add_step for the rules). A flow in queue mode `step` is compiled whole by its workers
-- (every step's private queue is provisioned with the definition), so add_step refuses it.
-- Locks: the flow's definition lock; then what _add_step takes.
-- Called by: SQL users building a flow by hand.
create or replace function pgflow.add_step(
  flow_slug text,
  step_slug text,
  deps_slugs text[] default '{}',
  max_attempts int default null,
  base_delay int default null,
  timeout int default null,
  start_delay int default null,
  step_type text default 'single',
  required_input_pattern jsonb default null,
  forbidden_input_pattern jsonb default null,
  when_unmet text default 'skip',
  when_exhausted text default 'fail'
) returns pgflow.steps
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform pgflow._lock_flow_definition(add_step.flow_slug);
  perform pgflow._refuse_step_queued_flow(add_step.flow_slug, 'add_step');
  return pgflow._add_step(
    flow_slug => add_step.flow_slug, step_slug => add_step.step_slug, deps_slugs => add_step.deps_slugs,
    max_attempts => add_step.max_attempts, base_delay => add_step.base_delay,
    timeout => add_step.timeout, start_delay => add_step.start_delay, step_type => add_step.step_type,
    required_input_pattern => add_step.required_input_pattern,
    forbidden_input_pattern => add_step.forbidden_input_pattern,
    when_unmet => add_step.when_unmet, when_exhausted => add_step.when_exhausted);
end;
$$;
