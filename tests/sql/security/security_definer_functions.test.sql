-- SECURITY DEFINER only where upstream has it: the client read/start entry points (with the
-- pinned start_flow_with_states_by_slug of flow aliases), stall recovery and its cron setup.
begin;
select plan(1);

select is(array(select p.proname::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1),
          array['get_run_with_states', 'requeue_stalled_tasks', 'setup_requeue_stalled_tasks_cron',
                'start_flow_with_states', 'start_flow_with_states_by_slug'],
          'the SECURITY DEFINER functions');

select * from finish();
rollback;
