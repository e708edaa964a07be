-- Serialises definition changes of one flow: lock order position 1 (sql/schema/README.md). The
-- lock is the row 'flow:<lower(flow_slug)>' of pgflow.locks (_lock_row: a bounded wait, a
-- timeout names the holder), so case aliases ("Orders", "orders") queue behind each other.
-- Transaction-scoped and reentrant: ensure_flow_compiled -> _create_flow_from_shape ->
-- _create_flow / _add_step hold it once.
-- Called by: _create_flow, _add_step, add_step, add_wait_step, ensure_flow_compiled,
-- delete_flow_and_data, _delete_flow_contents, activate_flow_version.
create or replace function pgflow._lock_flow_definition(flow_slug text) returns void
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  select pgflow._lock_row('flow:' || lower(flow_slug),
                          format('the definition lock of flow "%s"', flow_slug))
$$;
