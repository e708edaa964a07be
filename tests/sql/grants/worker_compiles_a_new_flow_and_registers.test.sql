-- A login whose only privilege is membership in pgflow_worker starts a worker for a flow the
-- database has never seen: handshake, compilation (which creates the flow's queue),
-- registration, LISTEN, polling, heartbeat, stop. The queue is created by and belongs to the
-- pgflow owner, not the worker (which owns nothing), and a second worker login verifies the
-- flow and polls the same queue.
begin;
select plan(18);

\i _install_as_owner.sql
\i _worker_statements.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_w1 nologin in role pgflow_worker;
create role grants_w2 nologin in role pgflow_worker;

select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('fetch'),
         pgflow_tests.step_shape('each', array['fetch'], 'map')))::text as shape \gset

set session authorization grants_w1;
select is(pgflow.worker_protocol(), 6, 'handshake: the worker reads the protocol');
select is(pgflow.ensure_flow_compiled('GrantsNew', :'shape'::jsonb, pgflow.worker_protocol()) - 'differences' - 'flow_control',
          '{"status": "compiled", "queue_name": "grantsnew", "queue_mode": "flow", "mismatchKind": null,
            "flow_alias": "GrantsNew", "activation": "activated", "active_flow_slug": "GrantsNew",
            "routes": [{"stepSlug": "fetch", "queueName": "grantsnew"},
                       {"stepSlug": "each", "queueName": "grantsnew"}]}'::jsonb,
          'compile: the worker creates a flow the database has never seen, with its queue');
select lives_ok($$select pgflow.register_worker('a0000000-0000-0000-0000-000000000001', 'grants-worker',
                                                'GrantsNew', 'grantsnew', pgflow.worker_protocol())$$,
                'register: the worker registers for the new flow');
select lives_ok($$listen "pgflow_queue:grantsnew"$$, 'the worker LISTENs for new work on its queue');
select is_empty($$select * from pg_temp.read_and_claim('grantsnew', 'GrantsNew',
                                                       'a0000000-0000-0000-0000-000000000001')$$,
                'poll: it reads and claims from the queue it just created (nothing there yet)');
select is(pgflow.worker_heartbeat('a0000000-0000-0000-0000-000000000001'), false,
          'heartbeat: recorded, not deprecated');
select lives_ok($$select pgflow.mark_worker_stopped('a0000000-0000-0000-0000-000000000001')$$,
                'stop: the worker marks itself stopped');
select throws_ok($$select pgflow._create_queue('payments')$$, '42501',
                 'permission denied for function _create_queue',
                 'queue creation as the owner is reached only through compilation');
select throws_ok($$select pgmq.create('payments')$$, '42501', 'permission denied for schema pgmq',
                 'and the worker cannot create a queue itself');
reset session authorization;

select is((select pg_get_userbyid(c.relowner) from pg_class c where c.oid = 'pgmq.q_grantsnew'::regclass),
          'grants_owner', 'the new queue table belongs to the pgflow owner');
select is((select pg_get_userbyid(c.relowner) from pg_class c where c.oid = 'pgmq.a_grantsnew'::regclass),
          'grants_owner', 'and so does its archive');
select is(array(select pg_temp.owned_by('pgflow_worker') union all select pg_temp.owned_by('grants_w1')),
          '{}'::text[], 'the worker role and its login own nothing');
select isnt((select w.stopped_at from pgflow.workers w
             where w.worker_id = 'a0000000-0000-0000-0000-000000000001'), null,
            'the worker row is marked stopped');
select is((select f.function_name from pgflow.worker_functions f), 'grants-worker',
          'its function is tracked');

set session authorization grants_w2;
select is(pgflow.ensure_flow_compiled('GrantsNew', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'verified',
          'a second worker login verifies the flow the first one compiled');
select lives_ok($$select pgflow.register_worker('a0000000-0000-0000-0000-000000000002', 'grants-worker',
                                                'GrantsNew', 'grantsnew', pgflow.worker_protocol())$$,
                'and registers');
select is_empty($$select * from pg_temp.read_and_claim('grantsnew', 'GrantsNew',
                                                       'a0000000-0000-0000-0000-000000000002')$$,
                'and polls the same queue');
select is((select count(*) from pgflow.workers where stopped_at is null), 1::bigint,
          'one worker is running');
reset session authorization;

select * from finish();
rollback;
