-- Serialises definition changes of one flow: lock order position 1 (sql/schema/README.md). The
-- advisory key is the lower-cased slug, so case aliases ("Orders", "orders") queue behind each
-- other. Transaction-scoped and reentrant: ensure_flow_compiled -> create_flow -> add_step
-- hold it once.
-- Called by: create_flow, add_step, ensure_flow_compiled, delete_flow_and_data.
create or replace function pgflow._lock_flow_definition(flow_slug text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_advisory_xact_lock(1, hashtext(lower(flow_slug)))
$$;
