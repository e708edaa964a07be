-- A visible message whose row another transaction holds (here: an uncommitted set_vt and an
-- uncommitted archive) is skipped, not waited for.
begin;
select plan(4);

set local lock_timeout = '10s';
do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgmq.create('held');
    perform pgmq.send_batch('held', array['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]);
  end $d$ $q$);
  perform dblink_connect('holder', pgflow_tests.dblink_connstr());
  perform dblink_exec('holder', 'begin');
  perform dblink_exec('holder', $q$do $d$ begin
    perform pgmq.set_vt('held', 1, 0);
    perform pgmq.archive('held', 2::bigint);
  end $d$ $q$);
end $$;

select results_eq($$select msg_id from pgmq.read('held', 30, 3)$$, $$values (3::bigint)$$,
                  'read returns only the message nobody holds, without waiting');
select is(dblink_exec('holder', 'rollback'), 'ROLLBACK', 'the other transaction rolls back');
select results_eq($$select msg_id from pgmq.read('held', 30, 3) order by 1$$, $$values (1::bigint), (2)$$,
                  'then the released messages are readable');
select is((select count(*) from pgmq.a_held), 0::bigint, 'nothing was archived');

do $$
begin
  perform dblink_disconnect('holder');
  perform dblink_disconnect('setup');
end $$;

select * from finish();
rollback;
