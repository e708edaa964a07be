-- Who holds a lock pgflow gave up waiting for, for error messages and warnings: the other
-- sessions whose transaction began before p_since (a session that held the lock through the
-- whole wait began before the wait did; busy workers with short transactions do not) and that
-- hold transaction p_locker (the xmax of the row waited for), or, when that names nobody (a
-- row still being inserted is invisible to the waiter; several share lockers), a row or table
-- lock on p_table - on any table of schemas pgflow and pgmq when p_table is NULL - in this
-- database (a database cloned from the same template has tables of the same OIDs).
-- Returns e.g. 'pid 4711 (role app, application psql, idle in transaction, transaction open
-- for 00:02:05)', several joined with '; ', or 'no session found (the holder may have finished)'.
-- pg_locks and pg_stat_activity are readable by every role (no query text is shown).
-- Called by: _raise_lock_timeout, EdgeWorker's stall recovery warning.
create or replace function pgflow._lock_holders(p_locker xid, p_table regclass, p_since timestamptz)
returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_pids int[];
begin
  v_pids := array(select l.pid from pg_locks l
                  where l.granted and l.locktype = 'transactionid' and l.transactionid = p_locker);
  if cardinality(v_pids) = 0 then
    v_pids := array(select l.pid from pg_locks l join pg_class c on c.oid = l.relation
                    where l.granted and l.locktype = 'relation' and l.mode <> 'AccessShareLock'
                      and l.database = (select d.oid from pg_database d
                                        where d.datname = current_database())
                      and case when p_table is null
                               then c.relnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
                               else c.oid = p_table end);
  end if;
  return coalesce(
    (select string_agg(format('pid %s (role %s, application %s, %s, transaction open for %s)',
                              a.pid, coalesce(quote_ident(a.usename::text), 'unknown'),
                              case when a.application_name = '' then 'unnamed'
                                   else quote_ident(a.application_name) end,
                              coalesce(a.state, 'state unknown'),
                              date_trunc('second', clock_timestamp() - a.xact_start)),
                       '; ' order by a.xact_start, a.pid)
     from pg_stat_activity a
     where a.pid = any(v_pids) and a.pid <> pg_backend_pid() and a.xact_start < p_since),
    'no session found (the holder may have finished)');
end;
$$;
