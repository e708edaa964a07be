-- The error of a bounded lock wait that timed out (SQLSTATE 55P03, as PostgreSQL's own): what
-- waited, for how long, and who holds the lock (_lock_holders), instead of PostgreSQL's bare
-- "canceling statement due to lock timeout". p_caught: the message of the error being replaced;
-- when an inner bounded wait (_lock_row) already named its holder, that message is kept.
-- Called by: the exception handlers of _lock_row, _lock_run_for_control and the bounded entry
-- points (_bound_lock_waits).
create or replace function pgflow._raise_lock_timeout(p_what text, p_locker xid, p_table regclass,
                                                      p_since timestamptz, p_caught text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_message text := p_caught;
begin
  if v_message is null or not starts_with(v_message, 'pgflow: gave up waiting') then
    v_message := format('pgflow: gave up waiting for %s after %s s; held by %s', p_what,
                        round(extract(epoch from clock_timestamp() - p_since)::numeric, 1),
                        pgflow._lock_holders(p_locker, p_table, p_since));
  end if;
  raise exception '%', v_message
    using errcode = 'lock_not_available',
          hint = 'End that transaction or wait for it (pg_terminate_backend(pid) ends a session), then retry; lock_timeout sets how long pgflow waits (30 s when unset).';
end;
$$;
