-- start_flow with the alias named as such: starts a run of the active version of `flow_alias`.
-- Called by: SQL users (Client::start_flow_by_alias goes through start_flow_with_states).
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_flow_by_alias(flow_alias text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select * from pgflow.start_flow(start_flow_by_alias.flow_alias, start_flow_by_alias.input, start_flow_by_alias.run_id);
end;
$$;
