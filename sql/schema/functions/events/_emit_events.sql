-- Publishes state changes, one event per element of the arrays, in array order: a step's
-- current status as step:<slug>:<status> where `p_step_slugs` has a slug, a run's as
-- run:<status> where it is NULL (`p_error_message` goes with failed runs). The one place events
-- go out (since 0015; _emit before), so a batch of results publishes all its events in one call:
--   * pg_notify on channel pgflow_events, one notification per event with only event (the
--     event type), run_id, flow_slug, step_slug and status, far below NOTIFY's 8000-byte
--     limit and never carrying data; set-based. Setting pgflow.notify_events to off turns it
--     off (per database, role or session; docs/observability.md): a transaction that notifies
--     takes a cluster-wide lock from its commit until the commit's WAL flush is done, so
--     notifying producers and reporters commit one at a time.
--   * when realtime.send(jsonb, text, text, boolean) exists (Supabase) and is trusted,
--     upstream's broadcast, on topic pgflow:run:<run_id> with upstream's payload
--     (_run_event_details, _step_event_details), read from the step state's or run's row as it
--     is now. Trusted (since 0027): every function named realtime.send is owned by a role that
--     has the current user's privileges (pg_has_role(owner, current_user, 'USAGE'): the current
--     user itself, a member of it that inherits, or a superuser - Supabase's supabase_admin). The
--     callers are SECURITY DEFINER, so the current user is pgflow's owner: before 0027 any role
--     with CREATE on the database could create schema realtime and a send() whose code then ran
--     as pgflow's owner and saw every payload. The function's owner is what matters: a function
--     is owned by whoever created it, and only its owner may replace, rename, move or re-own it,
--     so the owner of schema realtime (or a role with CREATE on it) can drop a trusted send but
--     never put an untrusted one in its place unseen. Every overload is checked because one
--     with defaults or a variadic tail could make the call ambiguous. An untrusted send is
--     silently skipped, like a missing one (docs/security.md).
-- Events carry keys, not rows (since 0024): a row passed by value is copied at every function
-- call, array and query it goes through, and an output or input of 100 MB made that 11 of a
-- complete_task's 22 seconds. Every caller publishes a row it has just written, so the row read
-- back is the one it would have passed; only the status can differ (a started wait step's
-- event says 'waiting').
-- Called by: _emit_run_event, _emit_step_event, _emit_step_events, complete_tasks.
create or replace function pgflow._emit_events(p_run_ids uuid[], p_flow_slugs text[],
                                               p_step_slugs text[], p_statuses text[],
                                               p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', jsonb_strip_nulls(jsonb_build_object(
              'event', case when e.step_slug is null then 'run:' else 'step:' end || e.status,
              'run_id', e.run_id, 'flow_slug', e.flow_slug, 'step_slug', e.step_slug,
              'status', e.status))::text)
    from unnest(p_run_ids, p_flow_slugs, p_step_slugs, p_statuses) with ordinality
         e(run_id, flow_slug, step_slug, status, n)
    order by e.n;
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering. Only a trusted send is called (see above).
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector)
     and not exists (select 1 from pg_catalog.pg_proc p
                     join pg_catalog.pg_namespace n on n.oid = p.pronamespace
                     where n.nspname = 'realtime' and p.proname = 'send'
                       and not pg_catalog.pg_has_role(p.proowner, current_user, 'USAGE')) then
    perform realtime.send(
              case when e.step_slug is null
                   then jsonb_build_object('event_type', 'run:' || e.status, 'run_id', e.run_id,
                                           'flow_slug', e.flow_slug, 'status', e.status)
                        || pgflow._run_event_details(r, p_error_message)
                   else jsonb_build_object('event_type', 'step:' || e.status, 'run_id', e.run_id,
                                           'step_slug', e.step_slug, 'status', e.status)
                        || pgflow._step_event_details(ss, e.status) end,
              case when e.step_slug is null then 'run:' || e.status
                   else 'step:' || e.step_slug || ':' || e.status end,
              'pgflow:run:' || e.run_id, false)
    from unnest(p_run_ids, p_flow_slugs, p_step_slugs, p_statuses) with ordinality
         e(run_id, flow_slug, step_slug, status, n)
    left join pgflow.step_states ss on ss.run_id = e.run_id and ss.step_slug = e.step_slug
    left join pgflow.runs r on e.step_slug is null and r.run_id = e.run_id
    order by e.n;
  end if;
end;
$$;
