-- The database speaks worker protocol 2 and offers the protocol-2 startup functions.
begin;
select plan(5);

select is(pgflow.worker_protocol(), 2, 'worker_protocol() = 2');
select is((select provolatile from pg_proc where oid = 'pgflow.worker_protocol()'::regprocedure), 'i',
          'it is immutable');
select has_function('pgflow', 'ensure_flow_compiled', array['text', 'jsonb', 'integer'],
                    'ensure_flow_compiled(flow_slug, shape, worker_protocol)');
select has_function('pgflow', 'register_worker', array['uuid', 'text', 'text', 'text', 'integer'],
                    'register_worker(worker_id, function_name, flow_slug, queue_name, worker_protocol)');
select has_function('pgflow', 'resume_worker_function', array['text'], 'resume_worker_function(function_name)');

select * from finish();
rollback;
