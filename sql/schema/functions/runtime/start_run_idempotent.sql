-- The idempotent start: a run of the active version of alias `flow_alias` for
-- `idempotency_key`, created once (start_run's arguments, with the key where its run id is).
-- The first start with a key creates the run (created = true); every later start with the same
-- alias and key returns that run's id (created = false), whatever its input, its status or the
-- alias's active version now — until the run is deleted (pruning frees its key). Concurrent
-- starts with one key create exactly one run. A key is 1 to 255 characters, compared exactly;
-- keys of different aliases never meet, and every starter of an alias shares its keys.
-- SECURITY DEFINER like start_run, and granted to the same roles; it runs in the caller's
-- transaction.
-- Locks: those of _start_run_idempotent.
-- Called by: Client::start_run_idempotent (and Transaction's), `pgflow start --idempotency-key`;
-- other drivers.
create or replace function pgflow.start_run_idempotent(flow_alias text, input jsonb, idempotency_key text,
                                                       out run_id uuid, out created boolean)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  select s.run_id, s.created into run_id, created
  from pgflow._start_run_idempotent(pgflow._resolve_flow_alias(start_run_idempotent.flow_alias),
                                    start_run_idempotent.input, start_run_idempotent.idempotency_key) s;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_idempotent(text, jsonb, text) from public;
