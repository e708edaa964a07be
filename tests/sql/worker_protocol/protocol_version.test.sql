-- The database speaks worker protocol 6 (claim ids, release_claim, permanent failures) and
-- offers its startup, claim and reporting functions.
begin;
select plan(10);

select is(pgflow.worker_protocol(), 6, 'worker_protocol() = 6');
select is((select provolatile from pg_proc where oid = 'pgflow.worker_protocol()'::regprocedure), 'i',
          'it is immutable');
select has_function('pgflow', 'ensure_flow_compiled', array['text', 'jsonb', 'integer', 'text', 'jsonb', 'text', 'jsonb'],
                    'ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map, flow_alias, flow_control)');
select has_function('pgflow', 'register_worker', array['uuid', 'text', 'text', 'text', 'integer'],
                    'register_worker(worker_id, function_name, flow_slug, queue_name, worker_protocol)');
select has_function('pgflow', 'claim_tasks', array['text', 'text', 'bigint[]', 'uuid', 'text'],
                    'claim_tasks(queue_name, flow_slug, msg_ids, worker_id, step_slug) (protocols 4 and 5)');
select has_function('pgflow', 'claim_tasks', array['text', 'text', 'bigint[]', 'uuid', 'text', 'uuid'],
                    'claim_tasks(queue_name, flow_slug, msg_ids, worker_id, step_slug, claim_id)');
select has_function('pgflow', 'release_claim', array['uuid', 'uuid'], 'release_claim(worker_id, claim_id)');
select has_function('pgflow', 'resume_worker_function', array['text'], 'resume_worker_function(function_name)');
select has_function('pgflow', 'complete_tasks', array['jsonb'], 'complete_tasks(results)');
select has_function('pgflow', 'fail_tasks', array['jsonb'], 'fail_tasks(results)');

select * from finish();
rollback;
