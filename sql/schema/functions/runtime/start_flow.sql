-- Starts a run of the active version of alias `flow_slug` (upstream's argument name; every flow
-- is a member of an alias, its own slug unless deployed under another one). Alias resolution and
-- the start happen in this one call; the run carries the concrete slug. A missing alias fails:
-- there is no fallback to a concrete slug (start_flow_by_slug pins one).
-- Called by: clients; start_flow_by_alias; SQL users and upstream tooling.
create or replace function pgflow.start_flow(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile  -- plpgsql, not sql: its plan is cached (producers call it often)
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select * from pgflow.start_flow_by_slug(pgflow._resolve_flow_alias(start_flow.flow_slug),
                                                       start_flow.input, start_flow.run_id);
end;
$$;
