-- start_run_idempotent of the concrete flow `flow_slug` (a pinned version). The key is still
-- scoped by the flow's alias: a start by slug and a start by alias with one key find each
-- other's run. SECURITY DEFINER, like start_run_idempotent.
-- Locks: those of _start_run_idempotent.
-- Called by: Client::start_run_idempotent_by_slug (and Transaction's); other drivers.
create or replace function pgflow.start_run_idempotent_by_slug(flow_slug text, input jsonb, idempotency_key text,
                                                               out run_id uuid, out created boolean)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  select s.run_id, s.created into run_id, created
  from pgflow._start_run_idempotent(start_run_idempotent_by_slug.flow_slug,
                                    start_run_idempotent_by_slug.input,
                                    start_run_idempotent_by_slug.idempotency_key) s;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_idempotent_by_slug(text, jsonb, text) from public;
