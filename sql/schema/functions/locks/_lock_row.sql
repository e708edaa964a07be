-- Locks the row p_lock_name of pgflow.locks until the end of the transaction, creating it on
-- first use; p_what names the lock in a timeout error ('the definition lock of flow "orders"').
-- A name longer than 200 characters (no valid slug is) is keyed by its first 160 and its md5,
-- so any input fits an index row and distinct names keep distinct locks.
-- The wait is bounded (_bound_lock_waits); a timeout names the holder (_raise_lock_timeout).
-- Reentrant: a transaction holding the row locks it again at once.
-- Locks: the row (FOR UPDATE), nothing else.
-- Called by: _lock_flow_alias, _lock_flow_definition.
create or replace function pgflow._lock_row(p_lock_name text, p_what text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_since timestamptz := clock_timestamp();
  v_key text := case when length(p_lock_name) <= 200 then p_lock_name
                     else left(p_lock_name, 160) || ':' || md5(p_lock_name) end;
  v_restore text;
begin
  v_restore := pgflow._bound_lock_waits();
  insert into pgflow.locks (lock_name) values (v_key) on conflict do nothing;
  perform 1 from pgflow.locks l where l.lock_name = v_key for update;
  perform set_config('lock_timeout', v_restore, true);
exception when lock_not_available then
  perform pgflow._raise_lock_timeout(p_what, (select l.xmax from pgflow.locks l where l.lock_name = v_key),
                                     'pgflow.locks', v_since);
end;
$$;
