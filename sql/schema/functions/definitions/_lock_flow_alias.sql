-- Serialises changes of one alias: its membership checks, its active pointer (first member,
-- compare-and-swap activation) and the deletion of its members. Lock order position 0: taken
-- before the concrete flow's definition lock (sql/schema/README.md). Keyed by the lower-cased
-- alias, in its own advisory namespace (2), so case aliases queue behind each other.
-- Called by: _create_flow, ensure_flow_compiled, activate_flow_version, delete_flow_and_data.
create or replace function pgflow._lock_flow_alias(flow_alias text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_advisory_xact_lock(2, hashtext(lower(flow_alias)))
$$;
