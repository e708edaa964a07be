-- SECURITY DEFINER where a documented role model needs it: the client read/start entry points
-- (with the pinned start_flow_with_states_by_slug of flow aliases and the lean
-- start_run[_by_slug], since 0017 start_run_idempotent[_by_slug]), run control (cancel_run, retry_run, resume_run), stall recovery and its
-- cron setup; queue creation and the pause of a worker function (0011); and, since 0012, the
-- whole worker API (with, since 0014, claim_tasks with a claim id and release_claim), so that
-- the worker role writes no table directly (docs/security.md); since 0018 the admission trigger
-- of concurrency limits (_admit_gated_tasks: it runs at commit, as the session's role) and
-- set_run_priority; since 0021 send_signal and the timers of wait steps (wake_waiting_tasks). Each
-- pins search_path = pg_catalog, pg_temp and none is executable by PUBLIC.
begin;
select plan(3);

select is(array(select p.proname::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1),
          array['_admit_gated_tasks', '_create_queue', '_pause_worker_function', 'cancel_run', 'claim_tasks', 'claim_tasks', 'complete_task',
                'complete_tasks', 'ensure_flow_compiled', 'fail_task', 'fail_tasks', 'get_run_with_states',
                'has_visible_work', 'mark_worker_stopped', 'register_worker', 'release_claim', 'requeue_stalled_tasks', 'resume_run', 'retry_run',
                'send_signal', 'set_run_priority', 'setup_requeue_stalled_tasks_cron', 'start_flow_with_states', 'start_flow_with_states_by_slug',
                'start_run', 'start_run_by_slug', 'start_run_idempotent', 'start_run_idempotent_by_slug',
                'start_tasks', 'wake_waiting_tasks', 'worker_heartbeat'],
          'the SECURITY DEFINER functions');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
                  and p.proconfig[1] is distinct from 'search_path=pg_catalog, pg_temp'
                order by 1),
          '{}'::text[], 'each pins search_path = pg_catalog, pg_temp first');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
                  and has_function_privilege('public', p.oid, 'EXECUTE')
                order by 1),
          '{}'::text[], 'PUBLIC may execute none of them (the migrations revoke it)');

select * from finish();
rollback;
