-- The lean pinned start: start_flow_by_slug of the concrete flow `flow_slug`, returning only the
-- new run's id. SECURITY DEFINER, like start_run.
-- Locks: those of start_flow_by_slug.
-- Called by: Client::start_run_by_slug, start_run (after resolving the alias); other drivers.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_run_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return (select r.run_id
          from pgflow.start_flow_by_slug(start_run_by_slug.flow_slug, start_run_by_slug.input,
                                         start_run_by_slug.run_id) r);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_by_slug(text, jsonb, uuid) from public;
