-- Test-only objects every pgTAP file and database test can use. Loaded into the template
-- database after the migrations; never part of an installation.
create extension if not exists pgtap;
create extension if not exists dblink;
create schema if not exists pgflow_tests;

-- A libpq connection string for the current database, for tests that need a second session
-- (dblink). The test clusters listen on 127.0.0.1 and trust the superuser postgres.
create or replace function pgflow_tests.dblink_connstr()
returns text
language sql stable
set search_path = ''
as $$
  select pg_catalog.format('host=127.0.0.1 port=%s user=postgres dbname=''%s''',
                           pg_catalog.current_setting('port'),
                           pg_catalog.replace(pg_catalog.replace(pg_catalog.current_database(),
                                                                 '\', '\\'), '''', '\'''));
$$;

-- Waits (at most timeout_s seconds) until backend `pid` waits on `wait_event_type` (and, when
-- given, `wait_event`). Returns whether it got there. Tests use it to know that a second session
-- has reached a blocking point before they go on.
create or replace function pgflow_tests.wait_for_wait_event(
  pid integer, wait_event_type text, wait_event text default null, timeout_s integer default 10)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  give_up timestamptz := pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => timeout_s);
begin
  loop
    -- pg_stat_activity is cached per transaction; drop the cache to see the current state.
    perform pg_catalog.pg_stat_clear_snapshot();
    if exists (select 1 from pg_catalog.pg_stat_activity a
               where a.pid = wait_for_wait_event.pid
                 and a.wait_event_type = wait_for_wait_event.wait_event_type
                 and (wait_for_wait_event.wait_event is null
                      or a.wait_event = wait_for_wait_event.wait_event)) then
      return true;
    end if;
    if pg_catalog.clock_timestamp() > give_up then
      return false;
    end if;
    perform pg_catalog.pg_sleep(0.01);
  end loop;
end;
$$;

-- Until backend `pid` sleeps in pg_sleep, i.e. a read_with_poll there has started polling.
create or replace function pgflow_tests.wait_for_pg_sleep(pid integer, timeout_s integer default 10)
returns boolean
language sql
set search_path = ''
as $$
  select pgflow_tests.wait_for_wait_event(pid, 'Timeout', 'PgSleep', timeout_s)
$$;

-- Until backend `pid` waits for a lock another session holds.
create or replace function pgflow_tests.wait_for_lock(pid integer, timeout_s integer default 10)
returns boolean
language sql
set search_path = ''
as $$
  select pgflow_tests.wait_for_wait_event(pid, 'Lock', null, timeout_s)
$$;

-- Two sessions racing: runs `first` in session a and `second` in session b (each returning one
-- text value), both in open transactions, so b must block behind a (or this fails); then a
-- commits, and b commits (or rolls back when it failed). Returns both results and b's error
-- (NULL when b succeeded). The statements commit for real: use it in a test's own database.
create or replace function pgflow_tests.race(first text, second text,
                                             out a_result text, out b_result text, out b_error text)
language plpgsql
as $$
declare
  b_pid int;
begin
  perform dblink_connect('race_a', pgflow_tests.dblink_connstr());
  perform dblink_connect('race_b', pgflow_tests.dblink_connstr());
  perform dblink_exec('race_a', 'begin');
  select x into a_result from dblink('race_a', first) as t(x text);
  perform dblink_exec('race_b', 'begin');
  select pid into b_pid from dblink('race_b', 'select pg_backend_pid()') as t(pid int);
  perform dblink_send_query('race_b', second);
  if not pgflow_tests.wait_for_lock(b_pid) then
    raise exception 'pgflow_tests.race: session b did not block behind session a';
  end if;
  perform dblink_exec('race_a', 'commit');
  select x into b_result from dblink_get_result('race_b', false) as t(x text);
  b_error := nullif(dblink_error_message('race_b'), 'OK');
  perform * from dblink_get_result('race_b', false) as t(x text);
  perform dblink_exec('race_b', case when b_error is null then 'commit' else 'rollback' end);
  perform dblink_disconnect('race_a');
  perform dblink_disconnect('race_b');
end;
$$;

-- pgTAP's throws_like checks only the message and throws_ok only an exact one: this checks
-- both the SQLSTATE and a LIKE pattern, for messages that carry a timestamp or generated id.
create or replace function pgflow_tests.throws_like(sql text, errcode text, pattern text, description text)
returns text
language plpgsql
as $$
declare
  v_state text;
  v_message text;
begin
  begin
    execute sql;
  exception when others then
    get stacked diagnostics v_state = returned_sqlstate, v_message = message_text;
    if v_state = errcode and v_message like pattern then
      return ok(true, description);
    end if;
    return ok(false, description) || E'\n' || diag(format(E'    caught: %s: %s\n    wanted: %s: like %s',
                                                           v_state, v_message, errcode, pattern));
  end;
  return ok(false, description) || E'\n' || diag(format('    no exception; wanted: %s: like %s', errcode, pattern));
end;
$$;

-- Whether another session holds the lock that `call` (e.g.
-- 'select pgflow._lock_flow_definition(''orders'')') takes: runs it on dblink connection
-- `connection` with a short lock_timeout, in a transaction of its own that ends at once. True
-- when it gave up waiting (SQLSTATE 55P03), false when it got the lock.
create or replace function pgflow_tests.lock_is_held(connection text, call text)
returns boolean
language plpgsql
as $$
begin
  perform dblink_exec(connection, 'set lock_timeout = ''100ms''');
  perform * from dblink(connection, format('select (%s)::text', call)) as t(x text);
  return false;
exception when lock_not_available then
  return true;
end;
$$;
