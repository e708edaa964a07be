-- pop uses SKIP LOCKED like read: a message another transaction holds is skipped, not waited for.
begin;
select plan(3);

set local lock_timeout = '10s';
do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgmq.create('held');
    perform pgmq.send_batch('held', array['{"n": 1}', '{"n": 2}']::jsonb[]);
  end $d$ $q$);
  perform dblink_connect('holder', pgflow_tests.dblink_connstr());
  perform dblink_exec('holder', 'begin');
end $$;
create temp table held as
  select * from dblink('holder', $q$select msg_id from pgmq.read('held', 0, 1)$q$) as t(msg_id bigint);

select is((select msg_id from held), 1::bigint, 'another open transaction holds message 1 (still visible)');
select results_eq($$select msg_id from pgmq.pop('held')$$, $$values (2::bigint)$$,
                  'pop skips it and takes message 2');
select is_empty($$select * from pgmq.pop('held')$$, 'then there is nothing it can take');

do $$
begin
  perform dblink_exec('holder', 'rollback');
  perform dblink_disconnect('holder');
  perform dblink_disconnect('setup');
end $$;

select * from finish();
rollback;
