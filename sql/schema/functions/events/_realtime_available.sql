-- Whether realtime.send(jsonb, text, text, boolean) exists (Supabase): then every event is
-- also broadcast with upstream's payload. Looked up in the catalog: to_regprocedure() would
-- raise for a caller without USAGE on schema realtime instead of answering.
-- Called by: _emit_run_event, _emit_step_event.
create or replace function pgflow._realtime_available() returns boolean
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select exists (select 1 from pg_catalog.pg_proc p
                 join pg_catalog.pg_namespace n on n.oid = p.pronamespace
                 where n.nspname = 'realtime' and p.proname = 'send'
                   and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector)
$$;
