-- The pg_temp trap (docs/security.md): a login holding only pgflow_worker or pgflow_starter
-- plants domains named like built-in types (pg_temp.text, jsonb, uuid, ...) whose CHECK runs
-- its own function, then calls every SECURITY DEFINER function it may call. With
-- search_path = '' PostgreSQL looks up type names in the caller's temporary schema first, so
-- each `text` inside such a function ran the caller's function as the owner; pinned to
-- pg_catalog, pg_temp, the functions see only the built-in types (the admission trigger of
-- concurrency limits too: the flow is limited). Here the planted function
-- raises when it runs as the owner on behalf of another login, so any call that fell into the
-- trap fails.

-- The flow, runs and tasks the calls need are set up by another session (dblink, committed):
-- PL/pgSQL resolves type names once per session, when it first compiles a function, so this
-- session must call no pgflow function before the trap is planted. (This file runs in its own
-- database.)
select dblink_connect('setup', pgflow_tests.dblink_connstr());
select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('only', options => '{"maxAttempts": 1}')))::text as shape \gset
select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('approve', wait => '{"kind": "signal", "timeout": 3600}')))::text as wait_shape \gset
select dblink_exec('setup', format($setup$
  -- (One implicit transaction: its tasks are admitted per statement, so the claim below sees them.)
  set constraints all immediate;
  select pgflow.ensure_flow_compiled('trap', %L, pgflow.worker_protocol(), 'flow', null, null,
                                     '{"concurrencyLimit": 100}');
  select pgflow.register_worker('a0000000-0000-0000-0000-000000000001', 'trap-worker', 'trap', 'trap',
                                pgflow.worker_protocol());
  -- Runs 1-6 with claimed tasks (for the result calls and stall recovery), 7-8 queued.
  select pgflow.start_run_by_slug('trap', '{"n": 1}', ('c0000000-0000-0000-0000-00000000000' || n)::uuid)
  from generate_series(1, 6) n;
  select pgflow.claim_tasks('trap', 'trap', array(select m.msg_id from pgmq.read('trap', 30, 6) m),
                            'a0000000-0000-0000-0000-000000000001');
  select pgflow.start_run_by_slug('trap', '{"n": 1}', ('c0000000-0000-0000-0000-00000000000' || n)::uuid)
  from generate_series(7, 8) n;
  -- Run 5's task stalled long ago: stall recovery has a task to requeue.
  update pgflow.step_tasks set queued_at = now() - interval '1 hour', started_at = now() - interval '1 hour'
  where run_id = 'c0000000-0000-0000-0000-000000000005';
  -- Two runs waiting for a signal; run d2's wait is overdue, so the timers have one to fire.
  select pgflow.ensure_flow_compiled('trap_wait', %L, pgflow.worker_protocol(), 'flow', null, null, null);
  select pgflow.start_run_by_slug('trap_wait', '{}', ('d0000000-0000-0000-0000-00000000000' || n)::uuid)
  from generate_series(1, 2) n;
  update pgflow.step_tasks set wake_at = now() - interval '1 second'
  where run_id = 'd0000000-0000-0000-0000-000000000002';
$setup$, :'shape', :'wait_shape'));
select message_id as queued_msg from dblink('setup', $$select message_id from pgflow.step_tasks
                                                     where run_id = 'c0000000-0000-0000-0000-000000000008'$$)
  as t(message_id bigint) \gset
select pg_get_userbyid(proowner) as owner from pg_proc where proname = 'requeue_stalled_tasks' \gset
select dblink_disconnect('setup');

begin;
select plan(34);
-- The flow has a concurrency limit, so every start and result also runs the admission trigger
-- (_admit_gated_tasks, SECURITY DEFINER), here at the end of each statement.
set constraints all immediate;
\i ../../../sql/contrib/grants.sql
create role trap_worker_login nologin in role pgflow_worker;
create role trap_starter_login nologin in role pgflow_starter;
-- The control: a SECURITY DEFINER function of the same owner pinned to search_path = '' (what
-- the pin replaced). It must fall into the trap, or the trap proves nothing.
create function public.trap_control() returns text language plpgsql security definer
set search_path = '' as $$ declare v text; begin v := 'x'; return v; end $$;
select format('alter function public.trap_control() owner to %I', :'owner') \gexec
grant execute on function public.trap_control() to public;

-- The trap, planted by the worker login: it fires only where it runs as the owner on behalf
-- of another login, i.e. inside a SECURITY DEFINER function.
set session authorization trap_worker_login;
select format($trap$
  create function pg_temp.fires() returns boolean language plpgsql as $f$
  begin
    if current_user = %L and session_user <> %L then
      raise exception 'TRAP: a caller''s temporary type ran as the owner %%', current_user;
    end if;
    return true;
  end $f$ $trap$, :'owner', :'owner') as plant \gexec
\set trap_types '{text,jsonb,json,uuid,int4,int8,bool,timestamptz,name,regclass,oid,xid,bytea,varchar}'
select format('create domain pg_temp.%I as pg_catalog.%I check (pg_temp.fires())', t, t)
from unnest(:'trap_types'::text[]) t \gexec
select throws_like($$select public.trap_control()$$, 'TRAP:%',
          'control: a definer function pinned to search_path = '''' runs the planted type as the owner');

-- The worker API, as a pgflow_worker login.
select lives_ok(format($$select pgflow.ensure_flow_compiled('trap', %L, 5, 'flow', null, null, '{"concurrencyLimit": 100}')$$, :'shape'),
          'ensure_flow_compiled (verify, limits included)');
select lives_ok(format($$select pgflow.ensure_flow_compiled('trap_new', %L, 5, 'flow', null, null, '{"steps": {"only": {"concurrencyLimit": 3}}}')$$, :'shape'),
          'ensure_flow_compiled (compile with limits, creating the queue through _create_queue)');
select lives_ok($$select pgflow.register_worker('a0000000-0000-0000-0000-000000000002', 'trap-worker', 'trap', 'trap', 5)$$,
          'register_worker');
select lives_ok($$select pgflow.worker_heartbeat('a0000000-0000-0000-0000-000000000001')$$,
          'worker_heartbeat');
select lives_ok($$select pgflow.has_visible_work('a0000000-0000-0000-0000-000000000001')$$,
          'has_visible_work');
select lives_ok($$select * from pgflow.claim_tasks('trap', 'trap', array(select m.msg_id from pgmq.read('trap', 30, 1) m), 'a0000000-0000-0000-0000-000000000001')$$,
          'claim_tasks');
select lives_ok($$select * from pgflow.claim_tasks('trap', 'trap', array(select m.msg_id from pgmq.read('trap', 30, 1) m), 'a0000000-0000-0000-0000-000000000001',
                                                   null, 'e0000000-0000-0000-0000-000000000001')$$,
          'claim_tasks with a claim id');
select lives_ok($$select pgflow.release_claim('a0000000-0000-0000-0000-000000000001', 'e0000000-0000-0000-0000-000000000001')$$,
          'release_claim');
select lives_ok(format($$select * from pgflow.start_tasks('trap', array[%s::bigint], 'a0000000-0000-0000-0000-000000000001')$$, :queued_msg),
          'start_tasks');
select lives_ok($$select * from pgflow.complete_tasks('[{"run_id": "c0000000-0000-0000-0000-000000000001", "step_slug": "only", "task_index": 0, "output": 1}]')$$,
          'complete_tasks');
select lives_ok($$select * from pgflow.fail_tasks('[{"run_id": "c0000000-0000-0000-0000-000000000002", "step_slug": "only", "task_index": 0, "error_message": "x"}]')$$,
          'fail_tasks');
select lives_ok($$select * from pgflow.complete_task('c0000000-0000-0000-0000-000000000003', 'only', 0, '1')$$,
          'complete_task');
select lives_ok($$select * from pgflow.fail_task('c0000000-0000-0000-0000-000000000004', 'only', 0, 'x')$$,
          'fail_task');
select lives_ok($$select pgflow.requeue_stalled_tasks()$$,
          'requeue_stalled_tasks');
select lives_ok($$select pgflow.mark_worker_stopped('a0000000-0000-0000-0000-000000000002')$$,
          'mark_worker_stopped');
select lives_ok($$select pgflow.wake_waiting_tasks()$$,
          'wake_waiting_tasks');

-- The starter's entry points, as a pgflow_starter login.
set session authorization trap_starter_login;
select lives_ok($$select pgflow.start_flow_with_states('trap', '{"n": 2}')$$,
          'start_flow_with_states');
select lives_ok($$select pgflow.start_flow_with_states_by_slug('trap', '{"n": 2}')$$,
          'start_flow_with_states_by_slug');
select lives_ok($$select pgflow.start_run('trap', '{"n": 2}')$$,
          'start_run');
select lives_ok($$select pgflow.start_run_by_slug('trap', '{"n": 2}')$$,
          'start_run_by_slug');
select lives_ok($$select pgflow.start_run_idempotent('trap', '{"n": 2}', 'trap-key-1')$$,
          'start_run_idempotent');
select lives_ok($$select pgflow.start_run_idempotent_by_slug('trap', '{"n": 2}', 'trap-key-2')$$,
          'start_run_idempotent_by_slug');
select lives_ok($$select pgflow.cancel_run('c0000000-0000-0000-0000-000000000006', 'x')$$,
          'cancel_run');
select lives_ok($$select pgflow.retry_run('c0000000-0000-0000-0000-000000000002')$$,
          'retry_run (of the run fail_tasks failed)');
select lives_ok($$select pgflow.resume_run('c0000000-0000-0000-0000-000000000004')$$,
          'resume_run (of the run fail_task failed)');
select lives_ok($$select pgflow.set_run_priority('c0000000-0000-0000-0000-000000000007', 5)$$,
          'set_run_priority');
select lives_ok($$select pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000001')$$,
          'get_run_with_states');
select lives_ok($$select pgflow.send_signal('d0000000-0000-0000-0000-000000000001', 'approve', 'trap-signal', '{"ok": true}')$$,
          'send_signal');

reset session authorization;
-- (The trap stays planted: statements below spell pg_catalog.text, as the session's own
-- search_path would find pg_temp.text first.)

-- The calls did their work (so the trap had every chance to fire) ...
select is((select array_agg(status order by run_id) from pgflow.runs where run_id::pg_catalog.text like 'c0000000-%'),
          array['completed', 'failed', 'completed', 'started', 'failed', 'failed', 'started', 'started'],
          '(the result calls, stall recovery, the resume and the cancellation took effect)');
select is((select array_agg(status order by run_id) from pgflow.runs where run_id::pg_catalog.text like 'd0000000-%'),
          array['completed', 'failed'], '(the signal completed run d1, the timer timed run d2 out)');
select isnt((select permanently_stalled_at from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000005'), null,
            '(stall recovery failed the stalled task: it had no attempt left)');
-- ... and they are every SECURITY DEFINER function a non-owner may call.
select is(array(select distinct p.proname::pg_catalog.text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
                  and (has_function_privilege('pgflow_worker', p.oid, 'EXECUTE')
                       or has_function_privilege('pgflow_starter', p.oid, 'EXECUTE'))
                order by 1),
          array['cancel_run', 'claim_tasks', 'complete_task', 'complete_tasks', 'ensure_flow_compiled', 'fail_task',
                'fail_tasks', 'get_run_with_states', 'has_visible_work', 'mark_worker_stopped', 'register_worker',
                'release_claim', 'requeue_stalled_tasks', 'resume_run', 'retry_run', 'send_signal', 'set_run_priority',
                'start_flow_with_states', 'start_flow_with_states_by_slug', 'start_run', 'start_run_by_slug', 'start_run_idempotent',
                'start_run_idempotent_by_slug', 'start_tasks', 'wake_waiting_tasks', 'worker_heartbeat'],
          'every SECURITY DEFINER function the roles may call was called above');
select is(array(select p.proname::pg_catalog.text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
                  and not has_function_privilege('pgflow_worker', p.oid, 'EXECUTE')
                  and not has_function_privilege('pgflow_starter', p.oid, 'EXECUTE')
                order by 1),
          array['_admit_gated_tasks', '_create_queue', '_pause_worker_function', 'setup_requeue_stalled_tasks_cron'],
          'the others are the owner''s alone (_create_queue was reached through ensure_flow_compiled; _admit_gated_tasks is a trigger function, run at commit for limited flows: concurrency_limits/)');

select * from finish();
rollback;
