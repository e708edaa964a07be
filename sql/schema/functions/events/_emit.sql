-- Publishes one state change: a run's (`p_run`) or a step's (`p_state`), as `event`, upstream's
-- event name (run:<kind> or step:<slug>:<kind>); `payload` carries event_type, run_id, status
-- and, for step events, step_slug. The pg_notify copy on channel pgflow_events keeps only ids,
-- slugs and status, so it stays far below NOTIFY's 8000-byte limit and never carries data;
-- setting pgflow.notify_events to off turns it off (see below; docs/observability.md). When
-- realtime.send(jsonb, text, text, boolean) exists (Supabase), upstream's broadcast goes out
-- too, on topic pgflow:run:<run_id>, with the rest of upstream's payload
-- (_run_event_details, _step_event_details): built only then, since a run's input or a step's
-- output can be large (since 0014).
-- Called by: _emit_run_event, _emit_step_event.
create or replace function pgflow._emit(payload jsonb, event text, flow_slug text,
                                        p_run pgflow.runs default null,
                                        p_state pgflow.step_states default null,
                                        p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  -- pgflow.notify_events = off (per database, role or session) leaves the channel silent: a
  -- transaction that notifies takes a cluster-wide lock from its commit until the commit's WAL
  -- flush is done, so notifying producers and reporters commit one at a time.
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', jsonb_strip_nulls(jsonb_build_object(
      'event', payload->>'event_type',
      'run_id', payload->>'run_id',
      'flow_slug', flow_slug,
      'step_slug', payload->>'step_slug',
      'status', payload->>'status'))::text);
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering.
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector) then
    perform realtime.send(
      payload || case when (p_run).run_id is not null then pgflow._run_event_details(p_run, p_error_message)
                      else pgflow._step_event_details(p_state) end,
      event, 'pgflow:run:' || (payload->>'run_id'), false);
  end if;
end;
$$;
