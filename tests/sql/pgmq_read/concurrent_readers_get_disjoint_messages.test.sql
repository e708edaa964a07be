-- Two sessions read the same queue, each inside an open transaction: neither waits for the
-- other and they never receive the same message. The queue is filled through a separate
-- committed session so that the readers can see it.
begin;
select plan(9);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgmq.create('shared');
    perform pgmq.send_batch('shared',
      array(select jsonb_build_object('n', g) from generate_series(1, 10) g));
  end $d$ $q$);
  perform dblink_connect('r1', pgflow_tests.dblink_connstr());
  perform dblink_connect('r2', pgflow_tests.dblink_connstr());
  -- A blocked reader would be a bug; fail instead of hanging.
  perform dblink_exec('r1', 'set lock_timeout = ''10s''');
  perform dblink_exec('r2', 'set lock_timeout = ''10s''');
  perform dblink_exec('r1', 'begin');
  perform dblink_exec('r2', 'begin');
end $$;

create temp table got1 as
  select * from dblink('r1', $q$select msg_id from pgmq.read('shared', 30, 6)$q$) as t(msg_id bigint);
create temp table got2 as
  select * from dblink('r2', $q$select msg_id from pgmq.read('shared', 30, 6)$q$) as t(msg_id bigint);

select is((select count(*) from got1), 6::bigint, 'the first reader gets the 6 it asked for');
select is((select count(*) from got2), 4::bigint,
          'the second reader skips the rows locked by the first and gets the other 4');
select is_empty($$select msg_id from got1 intersect select msg_id from got2$$,
                'no message went to both readers');
select set_eq($$select msg_id from got1 union all select msg_id from got2$$,
              $$select generate_series(1, 10)::bigint$$, 'together they received every message once');
select is_empty($$select * from pgmq.read('shared', 30, 10)$$,
                'a third reader gets nothing while both transactions are open');

select is(dblink_exec('r1', 'commit'), 'COMMIT', 'the first reader commits');
select is(dblink_exec('r2', 'rollback'), 'ROLLBACK', 'the second reader rolls back');

select set_eq($$select msg_id from pgmq.read('shared', 30, 10)$$, $$select msg_id from got2$$,
              'the rolled-back messages are visible again; the committed ones stay hidden');
select ok((select bool_and(q.read_ct = 1 and q.vt > clock_timestamp()) from pgmq.q_shared q join got1 using (msg_id)),
          'the committed read set read_ct and a future vt');

do $$
begin
  perform dblink_disconnect('r1');
  perform dblink_disconnect('r2');
  perform dblink_disconnect('setup');
end $$;

select * from finish();
rollback;
