-- Who may end a wait step (docs/security.md): a pgflow_starter login sends signals; a
-- pgflow_worker login cannot (a worker alone cannot complete a wait step: it runs handlers, it
-- does not approve), but runs the timers (wake_waiting_tasks), which the starter cannot. Neither
-- reads or writes pgflow.signals directly.
begin;
select plan(7);

\i _install_as_owner.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
select pgflow_tests.setup_wait_flow('grants_wait', '{"kind": "signal", "timeout": 60}');
select run_id as run from pgflow.start_flow('grants_wait', '{}') \gset
select run_id as timed from pgflow.start_flow('grants_wait', '{}') \gset
select pgflow_tests.complete_step_task(r, 'draft', 0, '"d"') from unnest(array[:'run', :'timed']::uuid[]) r;
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'timed' and step_slug = 'approve';
create role grants_worker_login nologin in role pgflow_worker;
create role grants_app_login nologin in role pgflow_starter;

set session authorization grants_worker_login;
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'forged', '"approved"')$$, :'run'), '42501',
                 'permission denied for function send_signal', 'the worker cannot send a signal');
select throws_ok($$select * from pgflow.signals$$, '42501', 'permission denied for table signals',
                 'nor read the signals');
select throws_ok(format($$insert into pgflow.signals (run_id, step_slug, task_index, signal_id, payload) values (%L, 'approve', 0, 'x', '1')$$, :'run'),
                 '42501', 'permission denied for table signals', 'nor buffer one by hand');
select is(pgflow.wake_waiting_tasks(), 1, 'it runs the timers');
reset session authorization;

set session authorization grants_app_login;
select throws_ok($$select pgflow.wake_waiting_tasks()$$, '42501', 'permission denied for function wake_waiting_tasks',
                 'the starter does not run the timers');
select is(pgflow.send_signal(:'run', 'approve', 'approval', '"approved"'), 'delivered', 'the starter sends the signal');
reset session authorization;
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'), '"approved"'::jsonb,
          'and it completed the wait');

select * from finish();
rollback;
