-- A root step's start_delay delays its first message; steps without one are visible at once.
begin;
select plan(3);

select pgflow.create_flow('d');
select pgflow.add_step('d', 'delayed', start_delay => 60);
select pgflow.add_step('d', 'now');
select clock_timestamp() as t0 \gset
select pgflow.start_flow('d', '{}');
select clock_timestamp() as t1 \gset

select ok(pgflow_tests.visible_after('delayed', 'd', 60, :'t0', :'t1'),
          'the delayed step''s message becomes visible after 60 s');
select ok(pgflow_tests.visible_after('now', 'd', 0, :'t0', :'t1'),
          'the other step''s message is visible now');
select is((select count(*) from pgmq.read('d', 30, 10)), 1::bigint, 'a worker reads only the undelayed message');

select * from finish();
rollback;
