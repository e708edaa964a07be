-- Publishes one state change. `payload` carries event_type, run_id, status and, for step
-- events, step_slug; when `broadcast` (realtime.send exists: _realtime_available) it is
-- upstream's whole broadcast payload, built by _emit_run_event or _emit_step_event only then
-- (inputs and outputs can be large); `event` is upstream's event name (run:<kind> or
-- step:<slug>:<kind>). The pg_notify copy on channel pgflow_events keeps only ids, slugs and
-- status, so it stays far below NOTIFY's 8000-byte limit and never carries data; setting
-- pgflow.notify_events to off turns it off (see below; docs/observability.md). With
-- `broadcast`, upstream's broadcast goes out through realtime.send(jsonb, text, text, boolean)
-- (Supabase) on topic pgflow:run:<run_id>.
-- Called by: _emit_run_event, _emit_step_event.
create or replace function pgflow._emit(payload jsonb, event text, flow_slug text, broadcast boolean)
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
  if broadcast then
    perform realtime.send(payload, event, 'pgflow:run:' || (payload->>'run_id'), false);
  end if;
end;
$$;
