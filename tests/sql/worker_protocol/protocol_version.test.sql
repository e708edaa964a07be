-- The database speaks worker protocol 3 (per-step queues) and offers its startup functions.
begin;
select plan(6);

select is(pgflow.worker_protocol(), 3, 'worker_protocol() = 3');
select is((select provolatile from pg_proc where oid = 'pgflow.worker_protocol()'::regprocedure), 'i',
          'it is immutable');
select has_function('pgflow', 'ensure_flow_compiled', array['text', 'jsonb', 'integer', 'text', 'jsonb'],
                    'ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map)');
select has_function('pgflow', 'register_worker', array['uuid', 'text', 'text', 'text', 'integer'],
                    'register_worker(worker_id, function_name, flow_slug, queue_name, worker_protocol)');
select has_function('pgflow', 'claim_tasks', array['text', 'text', 'bigint[]', 'uuid', 'text'],
                    'claim_tasks(queue_name, flow_slug, msg_ids, worker_id, step_slug)');
select has_function('pgflow', 'resume_worker_function', array['text'], 'resume_worker_function(function_name)');

select * from finish();
rollback;
