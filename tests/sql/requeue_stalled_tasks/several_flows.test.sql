-- One call recovers stalled tasks of every flow, each message in its own queue.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select pgflow_tests.setup_flow('sequential_other');
select pgflow.start_flow('sequential', '{}');
select pgflow.start_flow('other', '{}');
select count(*) from pgflow_tests.read_and_start('sequential', 60);
select count(*) from pgflow_tests.read_and_start('other', 60);
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';

select is(pgflow.requeue_stalled_tasks(), 2, 'both tasks requeued');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('first', 'sequential')), 'visible in the first queue');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('first', 'other')), 'visible in the second queue');

select * from finish();
rollback;
