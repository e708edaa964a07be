-- A released 0.16.0 worker, emulated by issuing exactly its startup SQL (track_worker_function,
-- two-argument ensure_flow_compiled, plain INSERT into workers), is refused at every step with a
-- protocol error (feature_not_supported, naming the protocol and what to upgrade) before it
-- registers or polls: no workers or worker_functions row, no flow compiled.
begin;
select plan(8);

select throws_ok($$select pgflow.track_worker_function('legacy_fn')$$, '0A000',
  'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'track_worker_function($name) is refused');
select throws_ok($$select pgflow.ensure_flow_compiled('legacy', '{"steps": [{"slug": "a", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail", "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}]}'::jsonb)$$,
  '0A000',
  'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'ensure_flow_compiled($slug, $shape::jsonb) is refused');
select throws_ok($$insert into pgflow.workers (queue_name, worker_id, function_name)
                   values ('legacy', '11111111-1111-1111-1111-111111111111', 'legacy_fn') returning *$$,
  '0A000',
  'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'INSERT INTO pgflow.workers (queue_name, worker_id, function_name) ... RETURNING * is refused');
select throws_ok($$insert into pgflow.workers (queue_name, worker_id, function_name, protocol)
                   values ('legacy', '11111111-1111-1111-1111-111111111111', 'legacy_fn', 1)$$,
  '0A000', 'pgflow: worker protocol 1 is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)', 'a plain INSERT claiming protocol 1 is refused too');

select is((select count(*) from pgflow.workers), 0::bigint, 'no workers row');
select is((select count(*) from pgflow.worker_functions), 0::bigint, 'no worker_functions row');
select is((select count(*) from pgflow.flows) + (select count(*) from pgflow.steps), 0::bigint, 'no flow was compiled');
select is((select count(*) from pgmq.meta), 0::bigint, 'no queue was created');

select * from finish();
rollback;
