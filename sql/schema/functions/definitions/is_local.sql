-- True when this database is a development database: the setting pgflow.local is on (the
-- embedded cluster sets it in postgresql.conf; `alter database … set pgflow.local = on` works
-- too). Nothing else decides "local": it allows destructive recompilation.
-- Locks: none.
-- Called by: ensure_flow_compiled.
create or replace function pgflow.is_local() returns boolean
language sql stable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select lower(coalesce(current_setting('pgflow.local', true), '')) in ('on', 'true', '1', 'yes')
$$;
