-- start_flow (of the active version of alias `flow_slug`), then the new run as
-- get_run_with_states returns it. SECURITY DEFINER (upstream's client calls it through RPC):
-- only granted roles may call it.
-- Called by: Client::start_flow; upstream clients.
create or replace function pgflow.start_flow_with_states(flow_slug text, input jsonb, run_id uuid default null)
returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return pgflow.start_flow_with_states_by_slug(pgflow._resolve_flow_alias(start_flow_with_states.flow_slug),
                                               start_flow_with_states.input, start_flow_with_states.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.start_flow_with_states(text, jsonb, uuid) from public;
