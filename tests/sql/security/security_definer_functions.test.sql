-- SECURITY DEFINER only where upstream has it: the client read/start entry points (with the
-- pinned start_flow_with_states_by_slug of flow aliases and the lean start_run[_by_slug]), run
-- control (cancel_run, retry_run, resume_run), stall recovery and its cron setup; and, ours
-- (0011), queue creation and the pause of a worker function, so that workers need neither
-- PGMQ's DDL rights nor the power to resume what they paused.
begin;
select plan(1);

select is(array(select p.proname::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1),
          array['_create_queue', '_pause_worker_function', 'cancel_run', 'get_run_with_states', 'requeue_stalled_tasks', 'resume_run', 'retry_run',
                'setup_requeue_stalled_tasks_cron', 'start_flow_with_states', 'start_flow_with_states_by_slug',
                'start_run', 'start_run_by_slug'],
          'the SECURITY DEFINER functions');

select * from finish();
rollback;
