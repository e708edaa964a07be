-- Stall recovery uses the task's queue snapshot: a requeued task's message becomes visible
-- in its own queue; a permanently stalled task's message is archived from it. (The step routes
-- to "alt" too: stall recovery acts only on tasks whose snapshot is their step's route, as
-- every task pgflow writes is; worker_cannot_plant_queue_names shows one that is not.)
begin;
\i _move_to_alt.sql
select plan(7);

select pgflow.create_flow('f', timeout => 1, max_attempts => 5);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a');
select pg_temp.move_to_alt('a') as a_msg \gset
update pgflow.steps set queue_name = 'alt' where flow_slug = 'f' and step_slug = 'a';
select pgmq.set_vt('alt', :a_msg, 3600);  -- hidden, as a claimed message is
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute'
where step_slug = 'a';

select is(pgflow.requeue_stalled_tasks(), 1, 'the stalled task is requeued');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('a', 'alt')), 'its message is visible again in alt');
select results_eq($$select msg_id from pgflow_tests.message_timing('a', 'f')$$, $$select null::bigint where false$$,
                  'the flow''s queue got no message for it');
select is((select status from pgflow.step_tasks where step_slug = 'a'), 'queued', '(queued again)');

-- After three requeues it stalls for good: exhausted, its message archived from alt.
update pgflow.step_tasks set status = 'started', attempts_count = 2, requeued_count = 3,
       started_at = now() - interval '1 minute'
where step_slug = 'a';
select is(pgflow.requeue_stalled_tasks(), 0, 'the permanently stalled task is not requeued');
select results_eq($$select status, permanently_stalled_at is not null from pgflow.step_tasks where step_slug = 'a'$$,
                  $$values ('failed'::text, true)$$, 'it failed as permanently stalled');
select results_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, array[:a_msg::bigint],
                  'its message was archived from alt');

select * from finish();
rollback;
