-- A root step's start_delay delays its first message; steps without one are visible at once.
begin;
select plan(3);

select pgflow.create_flow('d');
select pgflow.add_step('d', 'delayed', start_delay => 60);
select pgflow.add_step('d', 'now');
select pgflow.start_flow('d', '{}');

select ok((select vt_seconds between 58 and 61 from pgflow_tests.message_timing('delayed', 'd')),
          'the delayed step''s message becomes visible after about 60 s');
select ok((select vt_seconds between -1 and 1 from pgflow_tests.message_timing('now', 'd')),
          'the other step''s message is visible now');
select is((select count(*) from pgmq.read('d', 30, 10)), 1::bigint, 'a worker reads only the undelayed message');

select * from finish();
rollback;
