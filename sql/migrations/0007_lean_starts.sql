-- pgflow SQL core, 0007: lean starts.
--
--   * start_run(flow_alias, input, run_id) and start_run_by_slug(flow_slug, input, run_id):
--     start a run as start_flow_with_states / start_flow_with_states_by_slug do, and return
--     only its id instead of reading the new run back as JSON (Client::start_run). SECURITY
--     DEFINER, EXECUTE revoked from PUBLIC; sql/contrib/grants.sql grants them to
--     pgflow_starter.
--
-- Only functions are added: no table is touched and no lock is taken beyond those of
-- CREATE FUNCTION. Applied by the pgflow migration runner in one transaction.
-- Immutable once released.
set local check_function_bodies = off;

-- ---- sql/schema/functions/runtime/start_run_by_slug.sql
-- The lean pinned start: start_flow_by_slug of the concrete flow `flow_slug`, returning only the
-- new run's id. SECURITY DEFINER, like start_run.
-- Locks: those of start_flow_by_slug.
-- Called by: Client::start_run_by_slug, start_run (after resolving the alias); other drivers.
create or replace function pgflow.start_run_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns uuid
language sql volatile security definer
set search_path = ''
as $$
  select r.run_id
  from pgflow.start_flow_by_slug(start_run_by_slug.flow_slug, start_run_by_slug.input, start_run_by_slug.run_id) r
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_by_slug(text, jsonb, uuid) from public;

-- ---- sql/schema/functions/runtime/start_run.sql
-- The lean start: start_flow of the active version of alias `flow_alias`, returning only the new
-- run's id (start_flow_with_states also reads the run back as JSON, which a producer that only
-- needs the id pays for on every call). SECURITY DEFINER like start_flow_with_states, and
-- granted to the same roles; it runs in the caller's transaction.
-- Locks: those of start_flow_by_slug (the new run's rows; queue rows last).
-- Called by: Client::start_run; other drivers.
create or replace function pgflow.start_run(flow_alias text, input jsonb, run_id uuid default null)
returns uuid
language sql volatile security definer
set search_path = ''
as $$
  select pgflow.start_run_by_slug(pgflow._resolve_flow_alias(start_run.flow_alias), start_run.input,
                                  start_run.run_id)
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run(text, jsonb, uuid) from public;
