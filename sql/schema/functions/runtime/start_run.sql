-- The lean start: start_flow of the active version of alias `flow_alias`, returning only the new
-- run's id (start_flow_with_states also reads the run back as JSON, which a producer that only
-- needs the id pays for on every call). SECURITY DEFINER like start_flow_with_states, and
-- granted to the same roles; it runs in the caller's transaction.
-- Locks: those of start_flow_by_slug (the new run's rows; queue rows last).
-- Called by: Client::start_run; other drivers.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_run(flow_alias text, input jsonb, run_id uuid default null)
returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return pgflow.start_run_by_slug(pgflow._resolve_flow_alias(start_run.flow_alias), start_run.input,
                                  start_run.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run(text, jsonb, uuid) from public;
