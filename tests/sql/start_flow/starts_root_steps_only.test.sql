-- Only root steps get a task and a message; dependents wait.
begin;
select plan(3);

select pgflow_tests.setup_flow('two_roots_left_right');
select run_id as run from pgflow.start_flow('two_roots_left_right', '{"x": 1}') \gset

select results_eq(
  $$select step_slug, task_index, status, attempts_count from pgflow.step_tasks order by step_slug$$,
  $$values ('connected_root'::text, 0, 'queued'::text, 0), ('disconnected_root', 0, 'queued', 0)$$,
  'a queued task for each root step');
select results_eq(
  $$select q.message from pgmq.q_two_roots_left_right q order by q.message->>'step_slug'$$,
  format($$values (jsonb_build_object('flow_slug', 'two_roots_left_right', 'run_id', %L::uuid, 'step_slug', 'connected_root', 'task_index', 0)),
                  (jsonb_build_object('flow_slug', 'two_roots_left_right', 'run_id', %L::uuid, 'step_slug', 'disconnected_root', 'task_index', 0))$$,
         :'run', :'run'),
  'one message per root task, naming flow, run, step and task index');
select ok((select bool_and(t.message_id = q.msg_id)
           from pgflow.step_tasks t join pgmq.q_two_roots_left_right q on q.message->>'step_slug' = t.step_slug),
          'each task records its message id');

select * from finish();
rollback;
