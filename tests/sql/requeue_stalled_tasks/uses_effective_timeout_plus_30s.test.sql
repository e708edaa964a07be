-- A started task is stalled when it started longer ago than its step's effective timeout
-- (step, else flow) + 30 s. Upstream before 0.15.1 used the flow timeout for every step.
begin;
select plan(5);

select pgflow.create_flow('t', timeout => 10);
select pgflow.add_step('t', 'inherits');
select pgflow.add_step('t', 'long', timeout => 100);
select pgflow.add_step('t', 'short', timeout => 5);
select pgflow.start_flow('t', '{}');
select pgflow_tests.ensure_worker('t');
select count(*) from pgflow.start_tasks('t', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');

-- Ages just inside the limit: nothing is stalled yet.
update pgflow.step_tasks set queued_at = now() - interval '1 day',
  started_at = now() - case step_slug when 'inherits' then interval '39 s' when 'long' then interval '129 s'
                                      else interval '34 s' end;
select is(pgflow.requeue_stalled_tasks(), 0, 'within timeout + 30 s: nothing requeued');
select is((select count(*) from pgflow.step_tasks where status = 'started'), 3::bigint, 'all three still started');

-- "long" is past the flow timeout + 30 s but within its own.
update pgflow.step_tasks set started_at = now() - interval '60 s' where step_slug = 'long';
select is(pgflow.requeue_stalled_tasks(), 0, 'a step''s own longer timeout protects it');

-- Just past each limit.
update pgflow.step_tasks set started_at = now() - case step_slug when 'inherits' then interval '41 s'
  when 'long' then interval '131 s' else interval '36 s' end;
select is(pgflow.requeue_stalled_tasks(), 3, 'past timeout + 30 s: all three requeued');
select is((select count(*) from pgflow.step_tasks where status = 'queued'), 3::bigint, 'all three queued again');

select * from finish();
rollback;
