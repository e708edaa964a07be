-- A worker cannot make privileged code act on another application's queue (docs/security.md).
-- Before schema 0012 pgflow_worker could INSERT steps and tasks directly: a step routed to the
-- application queue `grants_billing` made the next run of grants.sql give workers DML on it, and
-- a started task naming (grants_billing, message 1) made requeue_stalled_tasks() - run as the
-- owner - archive that message. Now the worker writes definitions and tasks only through the
-- SECURITY DEFINER worker API, which derives every queue name; grants.sql grants only on queues
-- that are a step's derived route; and stall recovery touches only tasks whose queue is their
-- step's. Rows like the old plants can now only come from the owner (here: the superuser, as a
-- stand-in for rows left by an older version, which the 0012 migration itself refuses).
-- Also: running the script on grants an older version made withdraws the worker's writes.
-- The application's queue, created (and committed) before anything else: this file runs in a
-- database of its own.
select pgmq.create('grants_billing');
select pgmq.send('grants_billing', '{"invoice": 1}') is not null as sent;

begin;
select plan(19);

\i _install_as_owner.sql
\i _worker_statements.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset

set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_plant', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          '(the worker compiles its flow)');
-- Planting directly
select throws_ok($$insert into pgflow.flows (flow_slug, flow_alias) values ('grants_billing', 'grants_billing')$$,
                 '42501', 'permission denied for table flows', 'the worker cannot insert a flow');
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name)
                   values ('grants_plant', 'evil', 1, 'grants_billing')$$,
                 '42501', 'permission denied for table steps', 'nor a step routed to the application queue');
select throws_ok($$update pgflow.steps set queue_name = 'grants_billing'$$,
                 '42501', 'permission denied for table steps', 'nor re-route a step');
select throws_ok($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, queue_name, message_id, status, started_at)
                   select 'grants_plant', gen_random_uuid(), 'only', 'grants_billing', 1, 'started', now() - interval '1 day'$$,
                 '42501', 'permission denied for table step_tasks', 'nor a task naming a message of the application queue');
select throws_ok($$update pgflow.flows set created_at = now()$$,
                 '42501', 'permission denied for table flows', 'nor forge a flow''s creation time');
-- Planting through the API
select throws_ok($$select pgflow.ensure_flow_compiled('grants_billing', '$$ || :'shape' || $$', pgflow.worker_protocol())$$,
                 '42710', 'PGMQ queue "grants_billing" already exists; pgflow never adopts an existing queue for a new flow "grants_billing". Drop or rename that queue, or use another flow slug',
                 'a flow named after the application queue is refused: pgflow never adopts a queue');
select throws_ok($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000071', 'grants-plant', 'grants_plant',
                                                 'grants_billing', pgflow.worker_protocol())$$,
                 '22023', 'Queue "grants_billing" is not on the route of flow "grants_plant" (its queue is "grants_plant")',
                 'a worker registered on the application queue is refused');
select throws_ok($$select * from pgmq.read('grants_billing', 30, 1)$$, '42501',
                 'permission denied for table q_grants_billing', 'and the worker cannot read it');
reset session authorization;

-- Rows only the owner can write now, as an older version's worker could leave them.
insert into pgflow.flows (flow_slug, flow_alias) values ('grants_planted', 'grants_planted');
insert into pgflow.flow_aliases (flow_alias, flow_slug) values ('grants_planted', 'grants_planted');
insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name)
values ('grants_planted', 'evil', 0, 'grants_billing');
select pgflow.register_worker('b0000000-0000-0000-0000-000000000072', 'grants-plant', 'grants_plant', 'grants_plant',
                              pgflow.worker_protocol()) is not null as registered;
select pgflow.start_flow_with_states('grants_plant', '{}', 'c0000000-0000-0000-0000-000000000071') is not null as started;
select pgflow.start_flow_with_states('grants_plant', '{}', 'c0000000-0000-0000-0000-000000000072') is not null as started;
select count(*) from pg_temp.read_and_claim('grants_plant', 'grants_plant', 'b0000000-0000-0000-0000-000000000072');
-- Run 71's task stalled; run 72's task re-addressed to message 1 of the application queue.
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 day'
where run_id in ('c0000000-0000-0000-0000-000000000071', 'c0000000-0000-0000-0000-000000000072');
update pgflow.step_tasks set queue_name = 'grants_billing',
       message_id = (select min(msg_id) from pgmq.q_grants_billing)
where run_id = 'c0000000-0000-0000-0000-000000000072';

-- An older script's grants, on the queues and tables.
grant insert, update, delete on pgmq.q_grants_plant to pgflow_worker;
grant select, insert on pgmq.a_grants_plant to pgflow_worker;
grant insert on pgflow.steps, pgflow.step_tasks to pgflow_worker;
grant update (status, output) on pgflow.step_tasks to pgflow_worker;
grant execute on function pgflow._create_queue(text) to pgflow_worker;

set role grants_owner;
set local client_min_messages = error;  -- (the expected warning about the planted step)
\i ../../../sql/contrib/grants.sql
reset client_min_messages;
reset role;

select is(array(select p from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p
                where has_table_privilege('pgflow_worker', 'pgmq.q_grants_billing', p)),
          '{}'::text[], 'the script grants nothing on a queue that a step names but is not that step''s route');
select is(array(select p from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p
                where has_table_privilege('pgflow_worker', 'pgmq.q_grants_plant', p)),
          array['SELECT', 'UPDATE'], 'and withdraws what older versions granted on the flow''s own queue');
select is(has_table_privilege('pgflow_worker', 'pgmq.a_grants_plant', 'INSERT'), false, 'and on its archive');
select is(has_table_privilege('pgflow_worker', 'pgflow.steps', 'INSERT')
          or has_table_privilege('pgflow_worker', 'pgflow.step_tasks', 'INSERT')
          or has_column_privilege('pgflow_worker', 'pgflow.step_tasks', 'status', 'UPDATE'), false,
          'and the table and column writes');
select is(has_function_privilege('pgflow_worker', 'pgflow._create_queue(text)', 'EXECUTE'), false,
          'and the direct queue creation');

set session authorization grants_worker_login;
select is(pgflow.requeue_stalled_tasks(), 1, 'stall recovery, run by the worker, requeues the genuinely stalled task');
reset session authorization;
select is((select status from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000072'), 'started',
          'but not the task that names a message of the application queue');
select is((select (active, archived) from pgflow_tests.queue_counts('grants_billing'))::text, '(1,0)',
          'whose message stays where it was');
select is((select count(*) from pgmq.q_grants_billing where vt > now()), 0::bigint,
          '(and visible: its visibility was not touched)');
select is((select status from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000071'), 'queued',
          '(the stalled task of the flow''s own queue is queued again)');

select * from finish();
rollback;
