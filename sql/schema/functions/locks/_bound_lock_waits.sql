-- Bounds the lock waits of a startup or operator path: when the caller set no lock_timeout
-- (0, PostgreSQL's default: wait forever), sets 30 s for the rest of the transaction; a
-- caller's own lock_timeout is kept. Returns the value to put back with
-- set_config('lock_timeout', <it>, true) when the bounded work is done (an error rolls the
-- setting back with the transaction or savepoint anyway).
-- Called by: _lock_row, _lock_run_for_control, ensure_flow_compiled, register_worker,
-- activate_flow_version, delete_flow_and_data.
create or replace function pgflow._bound_lock_waits() returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_current text := current_setting('lock_timeout');
begin
  if v_current = '0' then
    perform set_config('lock_timeout', '30s', true);
  end if;
  return v_current;
end;
$$;
