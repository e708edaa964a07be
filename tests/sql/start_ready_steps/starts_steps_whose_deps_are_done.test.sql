-- When a step's last dependency completes, it is started: status, remaining_tasks, one queued
-- task and one message. Several ready steps start together, in step_slug order.
begin;
select plan(5);

select pgflow_tests.setup_flow('two_roots_left_right');
select run_id as run from pgflow.start_flow('two_roots_left_right', '{}') \gset
select pgflow.start_tasks('two_roots_left_right', array[(select message_id from pgflow.step_tasks where step_slug = 'connected_root')],
                          (pgflow_tests.ensure_worker('two_roots_left_right')).worker_id);
select pgflow.complete_task(:'run', 'connected_root', 0, '{"r": 1}');

select results_eq(
  $$select step_slug, status, remaining_tasks, started_at = now() from pgflow.step_states
    where step_slug in ('left', 'right') order by step_slug$$,
  $$values ('left'::text, 'started'::text, 1, true), ('right', 'started', 1, true)$$,
  'both children are started with remaining_tasks = initial_tasks');
select results_eq(
  $$select step_slug, task_index, status from pgflow.step_tasks where step_slug in ('left', 'right') order by step_slug$$,
  $$values ('left'::text, 0, 'queued'::text), ('right', 0, 'queued')$$,
  'each has one queued task');
select results_eq(
  $$select q.message->>'step_slug' from pgmq.q_two_roots_left_right q
    where q.message->>'step_slug' in ('left', 'right') order by q.msg_id$$,
  $$values ('left'::text), ('right')$$,
  'messages are sent in step_slug order');
select ok((select bool_and(t.message_id = q.msg_id) from pgflow.step_tasks t
           join pgmq.q_two_roots_left_right q on q.message->>'step_slug' = t.step_slug),
          'every task points at its message');
select is((select status from pgflow.step_states where step_slug = 'disconnected_root'), 'started',
          'the unrelated root is still running');

select * from finish();
rollback;
