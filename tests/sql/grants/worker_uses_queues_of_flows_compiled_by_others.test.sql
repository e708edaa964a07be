-- Flows compiled before the script ran (by the owner) and after it (by the owner, by a
-- superuser): pgflow_worker verifies and works all of them, and later queues belong to the
-- owner whoever compiled. The script grants on the queues of existing flows only (an
-- application queue stays closed), and refuses, listing the objects, a runner that cannot
-- grant on all of them.
begin;
select plan(16);

\i _install_as_owner.sql
\i _worker_statements.sql
create role grants_worker_login nologin;
create role grants_app_login nologin;
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset
\set grants_sql `cat ../../../sql/contrib/grants.sql`

-- Before the script: the owner compiles a flow and creates an application queue.
set role grants_owner;
select pgflow.ensure_flow_compiled('grants_old', :'shape'::jsonb, pgflow.worker_protocol())->>'status' as compiled;
select pgmq.create('grants_app_jobs');
reset role;

-- Only the owner (or a superuser) may run the script.
create role grants_admin nologin createrole;
grant usage on schema pgflow, pgmq to grants_admin with grant option;
grant select on pgflow.flows, pgflow.steps, pgmq.meta to grants_admin;
set role grants_admin;
select throws_like(:'grants_sql',
                   'pgflow grants: role "grants_admin" cannot grant on: function pgflow._admit_gated_tasks(), function pgflow._create_queue(text), function pgflow._pause_worker_function(text,text), function pgflow.cancel_run(uuid,text), %, table pgflow.flows, %, table pgmq.a_grants_old, table pgmq.meta, table pgmq.q_grants_old',
                   'a role that cannot grant on everything is refused, with the list of objects');
reset role;
revoke all on pgflow.flows, pgflow.steps, pgmq.meta from grants_admin;
revoke usage on schema pgflow, pgmq from grants_admin cascade;
set role grants_admin;
select throws_ok(:'grants_sql', '42501', 'pgflow grants: role "grants_admin" cannot grant on: schema pgflow, schema pgmq',
                 'a role without even the schemas is refused');
reset role;
select is((select count(*) from pg_roles where rolname in ('pgflow_worker', 'pgflow_starter')), 0::bigint,
          'and nothing changed');

set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
grant pgflow_worker to grants_worker_login;
grant pgflow_starter to grants_app_login;

-- After the script: the owner compiles one more flow, and so does a superuser.
set role grants_owner;
select pgflow.ensure_flow_compiled('grants_later', :'shape'::jsonb, pgflow.worker_protocol())->>'status' as compiled;
reset role;
select pgflow.ensure_flow_compiled('grants_su', :'shape'::jsonb, pgflow.worker_protocol())->>'status' as compiled;

set session authorization grants_worker_login;
select is(array(select pgflow.ensure_flow_compiled(f, :'shape'::jsonb, pgflow.worker_protocol())->>'status'
                from unnest(array['grants_old', 'grants_su', 'grants_later']) f),
          array['verified', 'verified', 'verified'], 'the worker verifies each flow');
select is(array(select (pgflow.register_worker(w::uuid, f || '-worker', f, f, pgflow.worker_protocol())).queue_name
                from (values ('grants_old', 'b0000000-0000-0000-0000-000000000041'),
                             ('grants_su', 'b0000000-0000-0000-0000-000000000042'),
                             ('grants_later', 'b0000000-0000-0000-0000-000000000043')) x(f, w)),
          array['grants_old', 'grants_su', 'grants_later'], 'and registers a worker for each');
reset session authorization;

set session authorization grants_app_login;
select is(array(select pgflow.start_flow_with_states(f, '{}', r::uuid)->'run'->>'status'
                from (values ('grants_old', 'c0000000-0000-0000-0000-000000000041'),
                             ('grants_su', 'c0000000-0000-0000-0000-000000000042'),
                             ('grants_later', 'c0000000-0000-0000-0000-000000000043')) x(f, r)),
          array['started', 'started', 'started'], 'the application starts a run of each');
reset session authorization;

set session authorization grants_worker_login;
select results_eq($$select outcome from pg_temp.read_and_claim('grants_old', 'grants_old', 'b0000000-0000-0000-0000-000000000041')$$,
                  $$values ('claimed')$$, 'the worker claims from the queue the owner created before the script');
select results_eq($$select outcome from pg_temp.read_and_claim('grants_su', 'grants_su', 'b0000000-0000-0000-0000-000000000042')$$,
                  $$values ('claimed')$$, 'and from the queue the superuser created');
select results_eq($$select outcome from pg_temp.read_and_claim('grants_later', 'grants_later', 'b0000000-0000-0000-0000-000000000043')$$,
                  $$values ('claimed')$$, 'and from the queue the owner created after the script');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(
                      pg_temp.result('c0000000-0000-0000-0000-000000000041', 'only', 0, '1'),
                      pg_temp.result('c0000000-0000-0000-0000-000000000042', 'only', 0, '2'),
                      pg_temp.result('c0000000-0000-0000-0000-000000000043', 'only', 0, '3')))$$,
                  $$values ('only', 'completed'), ('only', 'completed'), ('only', 'completed')$$,
                  'and completes the three tasks (archiving their messages)');
select throws_ok($$select * from pgmq.read('grants_app_jobs', 30, 1)$$, '42501',
                 'permission denied for table q_grants_app_jobs', 'the application queue stays closed');
reset session authorization;

select is(array(select status from pgflow.runs order by run_id), array['completed', 'completed', 'completed'],
          'all three runs completed');
select is(array(select pg_get_userbyid(relowner)::text from pg_class where oid in ('pgmq.q_grants_later'::regclass, 'pgmq.q_grants_su'::regclass)),
          array['grants_owner', 'grants_owner'], 'queues created after the script belong to the owner, whoever compiled');
select is(array(select p from unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p
                where has_table_privilege('pgflow_worker', 'pgmq.q_grants_old', p)),
          array['SELECT', 'UPDATE'], 'an existing queue gets what pgmq.read needs (messages are sent and archived as the owner)');
select is(has_table_privilege('pgflow_worker', 'pgmq.a_grants_old', 'SELECT')
          or has_table_privilege('pgflow_worker', 'pgmq.a_grants_old', 'INSERT'), false,
          'and its archive nothing');
select is(has_table_privilege('pgflow_worker', 'pgmq.q_grants_app_jobs', 'SELECT'), false,
          '(no privilege on the application queue at all)');

select * from finish();
rollback;
