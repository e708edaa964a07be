-- Serialises changes of one alias: its membership checks, its active pointer (first member,
-- compare-and-swap activation) and the deletion of its members. Lock order position 0: taken
-- before the concrete flow's definition lock (sql/schema/README.md). The lock is the row
-- 'alias:<lower(flow_alias)>' of pgflow.locks (_lock_row: a bounded wait, a timeout names the
-- holder), so case aliases queue behind each other.
-- Called by: _create_flow, ensure_flow_compiled, activate_flow_version, delete_flow_and_data.
create or replace function pgflow._lock_flow_alias(flow_alias text) returns void
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  select pgflow._lock_row('alias:' || lower(flow_alias),
                          format('the lock of flow alias "%s"', flow_alias))
$$;
