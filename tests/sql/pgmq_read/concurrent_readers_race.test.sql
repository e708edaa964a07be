-- Two sessions read the same queue at the same moment, round after round, until it is drained:
-- no message is ever delivered twice. A third session holds the queue table's lock while both
-- reads start, so both wait at that gate (asserted) and run together once it opens.
begin;
select plan(4);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgmq.create('race');
    perform pgmq.send_batch('race',
      array(select jsonb_build_object('n', g) from generate_series(1, 100) g));
  end $d$ $q$);
  perform dblink_connect('gate', pgflow_tests.dblink_connstr());
  perform dblink_connect('r1', pgflow_tests.dblink_connstr());
  perform dblink_connect('r2', pgflow_tests.dblink_connstr());
end $$;

create temp table delivered (reader text, msg_id bigint);
create temp table gated (round integer, both_waited boolean);

-- Each round delivers at least 3 messages while any are left, so 40 rounds drain 100.
do $$
declare
  round integer;
  conn text;
  r1_pid integer := (select pid from dblink('r1', 'select pg_backend_pid()') as t(pid integer));
  r2_pid integer := (select pid from dblink('r2', 'select pg_backend_pid()') as t(pid integer));
begin
  for round in 1..40 loop
    perform dblink_exec('gate', 'begin');
    perform dblink_exec('gate', 'lock table pgmq.q_race in access exclusive mode');
    perform dblink_send_query('r1', $q$select msg_id from pgmq.read('race', 300, 3)$q$);
    perform dblink_send_query('r2', $q$select msg_id from pgmq.read('race', 300, 3)$q$);
    insert into gated values (round, pgflow_tests.wait_for_lock(r1_pid) and pgflow_tests.wait_for_lock(r2_pid));
    perform dblink_exec('gate', 'commit');
    foreach conn in array array['r1', 'r2'] loop
      insert into delivered select conn, t.msg_id from dblink_get_result(conn) as t(msg_id bigint);
      -- The empty result that ends the asynchronous query.
      perform * from dblink_get_result(conn) as t(msg_id bigint);
    end loop;
  end loop;
end $$;

select is((select count(*) from gated where both_waited), 40::bigint, 'in every round both reads waited at the gate');
select is((select count(*) from delivered), (select count(distinct msg_id) from delivered),
          'no message was delivered twice');
select is((select count(distinct msg_id) from delivered), 100::bigint, 'every message was delivered');
select ok((select count(distinct reader) from delivered) = 2, 'both readers received messages');

do $$
begin
  perform dblink_disconnect('gate');
  perform dblink_disconnect('r1');
  perform dblink_disconnect('r2');
  perform dblink_disconnect('setup');
end $$;

select * from finish();
rollback;
