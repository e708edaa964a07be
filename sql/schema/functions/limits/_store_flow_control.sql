-- Persists a flow's normalized flow-control options (_normalize_flow_control), replacing any
-- it had: a gate row when any limit is set, a row per limited step, and which steps a limit
-- applies to (steps.concurrency_limited, read by the starts).
-- Locks: the caller holds the flow's definition lock; the gate row.
-- Called by: ensure_flow_compiled (a flow it compiles or recompiles).
create or replace function pgflow._store_flow_control(p_flow_slug text, p_flow_control jsonb)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  delete from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug;
  update pgflow.steps s
  set concurrency_limited = p_flow_control ? 'concurrencyLimit'
                            or coalesce(p_flow_control->'steps', '{}') ? s.step_slug
  where s.flow_slug = p_flow_slug;
  if p_flow_control = '{}' then
    return;
  end if;
  insert into pgflow.concurrency_gates (flow_slug, flow_limit)
  values (p_flow_slug, (p_flow_control->>'concurrencyLimit')::int);
  insert into pgflow.step_concurrency_limits (flow_slug, step_slug, step_limit)
  select p_flow_slug, s.key, (s.value->>'concurrencyLimit')::int
  from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s;
end;
$$;
