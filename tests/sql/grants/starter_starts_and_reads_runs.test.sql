-- A login whose only privilege is membership in pgflow_starter does what pgflow::Client does:
-- the schema check, start_flow_with_states (also inside its own transaction), the pinned
-- start_flow_with_states_by_slug, the lean start_run / start_run_by_slug, the idempotent
-- start_run_idempotent[_by_slug], get_run_with_states,
-- LISTEN pgflow_events. Runs go to a queue the worker created; the SECURITY DEFINER functions
-- run as the (non-superuser) pgflow owner.
begin;
select plan(20);

\i _install_as_owner.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
create role grants_app_login nologin in role pgflow_starter;

select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('first'),
         pgflow_tests.step_shape('each', array['first'], 'map')))::text as shape \gset
set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_start', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          '(a worker compiled the flow and created its queue)');
reset session authorization;

set session authorization grants_app_login;
select is(to_regprocedure('pgflow.start_flow_with_states(text,jsonb,uuid)') is not null, true,
          'Client::connect: the schema check sees the entry point');
select lives_ok($$listen pgflow_events$$, 'wait_for_run / subscribe: LISTEN pgflow_events');
select is(pgflow.start_flow_with_states('grants_start', '{"x": 1}', 'c0000000-0000-0000-0000-000000000021')->'run'->>'status',
          'started', 'start_flow: starts a run');
select is(pgflow.start_flow_with_states('grants_start', '{"x": 2}')->'steps'->0->>'status', 'started',
          'without a run id too, and its first step started');
select throws_like($$select pgflow.start_flow_with_states('grants_start', '{}', 'c0000000-0000-0000-0000-000000000021')$$,
                   'Run id c0000000-0000-0000-0000-000000000021 is taken: a run of flow "grants_start" started with it at %',
                   'starting the same run id twice fails (retry safety), naming the id');
select throws_ok($$select pgflow.start_flow_with_states('no_such_flow', '{}')$$,
                 'P0002', 'Flow alias "no_such_flow" does not exist', 'an unknown flow is reported');
select is(pgflow.start_flow_with_states_by_slug('grants_start', '{"x": 4}')->'run'->>'flow_slug', 'grants_start',
          'start_flow_by_slug: starts a run of the concrete version');
select throws_ok($$select pgflow.start_flow_with_states_by_slug('no_such_flow', '{}')$$,
                 'P0002', 'Flow "no_such_flow" does not exist', 'an unknown concrete flow is reported');
select is(pgflow.start_run('grants_start', '{"x": 5}', 'c0000000-0000-0000-0000-000000000025'),
          'c0000000-0000-0000-0000-000000000025'::uuid, 'start_run: starts a run and returns its id');
select pgflow.start_run_by_slug('grants_start', '{"x": 6}') as pinned_run \gset
select is(pgflow.get_run_with_states(:'pinned_run')->'run'->'input',
          '{"x": 6}'::jsonb, 'start_run_by_slug: starts a run of the concrete version');
select created as first_created, run_id as keyed_run from pgflow.start_run_idempotent('grants_start', '{"x": 7}', 'order-7') \gset
select is(:'first_created'::boolean, true, 'start_run_idempotent: the first start with a key creates the run');
select is((select row(run_id, created)::text from pgflow.start_run_idempotent_by_slug('grants_start', '{"x": 8}', 'order-7')),
          row(:'keyed_run'::uuid, false)::text, 'start_run_idempotent_by_slug: a repeat returns it, not created');
select throws_ok($$select pgflow.start_run('no_such_flow', '{}')$$,
                 'P0002', 'Flow alias "no_such_flow" does not exist', 'start_run: an unknown alias is reported');
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000021')->'run'->'input', '{"x": 1}'::jsonb,
          'get_run: reads the run');
select is(jsonb_array_length(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000021')->'steps'), 2,
          'with its steps');
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000029'), null, 'an unknown run is NULL');

-- in_transaction: the run exists exactly when the application's transaction commits.
savepoint app_tx;
select is(pgflow.start_flow_with_states('grants_start', '{"x": 3}', 'c0000000-0000-0000-0000-000000000023')->'run'->>'status',
          'started', 'a run started inside the application''s transaction');
rollback to savepoint app_tx;
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000023'), null,
          'is gone with it when that transaction rolls back');
reset session authorization;

select is((select (active, archived) from pgflow_tests.queue_counts('grants_start'))::text, '(6,0)',
          'the runs'' messages are in the worker-created queue');

select * from finish();
rollback;
