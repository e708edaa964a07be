-- In a step queue, a message whose task belongs to another step (wrong route), or a message
-- that addresses another step but has no task, is fatal unsupported work under the batch
-- classification: nothing is claimed or archived, the batch is visible again, the worker's
-- function is paused.
begin;
select plan(6);

select pgflow_tests.compile_step_flow('routes', jsonb_build_array(
  pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b')));
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'routes-a-worker', 'routes', 'routes__a',
                              pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('routes', '{}') \gset

-- Move b's task (identity and message) into a's queue: a task on the wrong route.
select pgmq.send('routes__a', jsonb_build_object('flow_slug', 'routes', 'run_id', :'run', 'step_slug', 'b',
                                                 'task_index', 0)) as moved \gset
update pgflow.step_tasks set queue_name = 'routes__a', message_id = :moved
where run_id = :'run' and step_slug = 'b';

select results_eq($$select outcome, reason from pgflow.claim_tasks('routes__a', 'routes',
                      array(select msg_id from pgmq.read('routes__a', 30, 10) order by msg_id),
                      '11111111-1111-1111-1111-111111111111', 'a') order by msg_id$$,
                  $$values ('reset'::text, null::text),
                           ('fatal', 'its task belongs to step "b", not to this worker''s step "a"')$$,
                  'a task of another step in this queue is fatal; its batch is reset');
select is((select count(*) from pgflow.step_tasks where run_id = :'run' and status = 'started'), 0::bigint,
          'nothing was claimed');
select isnt((select paused_at from pgflow.worker_functions where function_name = 'routes-a-worker'), null,
            'the worker function is paused');
select is((pgflow_tests.queue_counts('routes__a')).active, 2::bigint, 'both messages are still there, visible');

select pgflow.resume_worker_function('routes-a-worker');
delete from pgflow.step_tasks where run_id = :'run' and step_slug = 'b';  -- only the message is left
select results_eq($$select outcome, reason from pgflow.claim_tasks('routes__a', 'routes',
                      array(select msg_id from pgmq.read('routes__a', 30, 10) order by msg_id),
                      '11111111-1111-1111-1111-111111111111', 'a') order by msg_id$$,
                  $$values ('reset'::text, null::text),
                           ('fatal', 'it looks like pgflow work but no task has this (queue, message id)')$$,
                  'a message addressing another step without a task is fatal too');
select is((pgflow_tests.queue_counts('routes__a')).archived, 0::bigint, 'nothing was archived');

select * from finish();
rollback;
