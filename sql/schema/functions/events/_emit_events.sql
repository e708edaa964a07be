-- Publishes state changes: each step state of `p_states` as step:<slug>:<status>, then each run
-- of `p_runs` as run:<status> (in array order; `p_error_message` goes with failed runs). The
-- one place events go out (since 0015; _emit before), so a batch of results publishes all its
-- events in one call:
--   * pg_notify on channel pgflow_events, one notification per event with only event (the
--     event type), run_id, flow_slug, step_slug and status, far below NOTIFY's 8000-byte
--     limit and never carrying data; set-based. Setting pgflow.notify_events to off turns it
--     off (per database, role or session; docs/observability.md): a transaction that notifies
--     takes a cluster-wide lock from its commit until the commit's WAL flush is done, so
--     notifying producers and reporters commit one at a time.
--   * when realtime.send(jsonb, text, text, boolean) exists (Supabase), upstream's broadcast,
--     on topic pgflow:run:<run_id> with upstream's payload (_run_event_details,
--     _step_event_details): built only then, since a run's input or a step's output can be
--     large.
-- Called by: _emit_run_event, _emit_step_event, complete_tasks.
create or replace function pgflow._emit_events(p_states pgflow.step_states[], p_runs pgflow.runs[],
                                               p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  -- Events in order: the steps (array order), then the runs.
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', e.note)
    from (select jsonb_strip_nulls(jsonb_build_object(
                   'event', 'step:' || s.status, 'run_id', s.run_id, 'flow_slug', s.flow_slug,
                   'step_slug', s.step_slug, 'status', s.status))::text as note, 1 as part, s.n
          from (select (p_states[i]).*, i as n from generate_subscripts(p_states, 1) i) s
          union all
          select jsonb_build_object('event', 'run:' || r.status, 'run_id', r.run_id,
                                    'flow_slug', r.flow_slug, 'status', r.status)::text, 2, r.n
          from (select (p_runs[i]).*, i as n from generate_subscripts(p_runs, 1) i) r) e
    order by e.part, e.n;
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering.
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector) then
    perform realtime.send(e.payload, e.event, 'pgflow:run:' || e.run_id, false)
    from (select jsonb_build_object('event_type', 'step:' || (p_states[i]).status,
                                    'run_id', (p_states[i]).run_id,
                                    'step_slug', (p_states[i]).step_slug,
                                    'status', (p_states[i]).status)
                 || pgflow._step_event_details(p_states[i]) as payload,
                 'step:' || (p_states[i]).step_slug || ':' || (p_states[i]).status as event,
                 (p_states[i]).run_id, 1 as part, i as n
          from generate_subscripts(p_states, 1) i
          union all
          select jsonb_build_object('event_type', 'run:' || (p_runs[i]).status,
                                    'run_id', (p_runs[i]).run_id,
                                    'flow_slug', (p_runs[i]).flow_slug,
                                    'status', (p_runs[i]).status)
                 || pgflow._run_event_details(p_runs[i], p_error_message),
                 'run:' || (p_runs[i]).status, (p_runs[i]).run_id, 2, i
          from generate_subscripts(p_runs, 1) i) e
    order by e.part, e.n;
  end if;
end;
$$;
