-- A session polls an empty queue; another session sends and commits during the poll; the poll
-- returns that message instead of waiting for max_poll_seconds.
begin;
select plan(6);

do $$
begin
  perform dblink_connect('sender', pgflow_tests.dblink_connstr());
  perform dblink_exec('sender', $q$do $d$ begin perform pgmq.create('waiting'); end $d$ $q$);
  perform dblink_connect('poller', pgflow_tests.dblink_connstr());
end $$;
create temp table poller as select * from dblink('poller', 'select pg_backend_pid()') as t(pid integer);

select is(dblink_send_query('poller',
            $q$select msg_id, message, read_ct from pgmq.read_with_poll('waiting', 30, 5, 3600, 50)$q$),
          1, 'start polling the empty queue for up to an hour');
select ok(pgflow_tests.wait_for_pg_sleep((select pid from poller)),
          'the poller is sleeping between reads of the empty queue');
select is(dblink_is_busy('poller'), 1, 'the poll has not returned');

create temp table sent as
  select t.msg_id, clock_timestamp() as at
  from dblink('sender', $q$select * from pgmq.send('waiting', '{"hello": "world"}')$q$) as t(msg_id bigint);
create temp table got as
  select t.*, clock_timestamp() as at
  from dblink_get_result('poller') as t(msg_id bigint, message jsonb, read_ct integer);

select results_eq($$select msg_id, message, read_ct from got$$,
                  $$select msg_id, '{"hello": "world"}'::jsonb, 1 from sent$$,
                  'the poll returned the message sent during it');
-- The poll is waiting for up to an hour: that it returned shows the send ended it.
select ok((select got.at - sent.at from got, sent) < interval '3600 seconds',
          'it returned after the send, not at the one-hour deadline');
select is_empty($$select * from dblink_get_result('poller') as t(msg_id bigint, message jsonb, read_ct integer)$$,
                'nothing else came back');

do $$
begin
  perform dblink_disconnect('poller');
  perform dblink_disconnect('sender');
end $$;

select * from finish();
rollback;
