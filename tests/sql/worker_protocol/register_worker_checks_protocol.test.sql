-- register_worker and ensure_flow_compiled accept protocols 4, 5 and 6: an older worker is told
-- to upgrade itself (a protocol-3 worker predates flow aliases), a newer one to upgrade the
-- database, and nothing is written. A protocol-4 worker (reports with complete_task) still
-- registers. A worker registers for a queue on its flow's route only.
begin;
select plan(16);

select throws_ok($$select pgflow.ensure_flow_compiled('f', '{"steps": []}', 1)$$, '0A000',
  'pgflow: worker protocol 1 is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'ensure_flow_compiled with protocol 1 is refused');
select throws_ok($$select pgflow.ensure_flow_compiled('f', '{"steps": []}', 3)$$, '0A000',
  'pgflow: worker protocol 3 is not supported by this database (it speaks protocol 6): upgrade the worker (its pgflow library is older than this database''s schema)',
  'ensure_flow_compiled with protocol 3 is refused');
select throws_ok($$select pgflow.ensure_flow_compiled('f', '{"steps": []}', 7)$$, '0A000',
  'pgflow: worker protocol 7 is not supported by this database (it speaks protocol 6): upgrade the database with `pgflow migrate`',
  'ensure_flow_compiled with protocol 7 is refused');
select is((select count(*) from pgflow.flows), 0::bigint, '(nothing compiled)');

select pgflow.ensure_flow_compiled('myFlow', '{"steps": []}', pgflow.worker_protocol());
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', 1)$$, '0A000',
  'pgflow: worker protocol 1 is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'register_worker with protocol 1 is refused');
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', 3)$$, '0A000',
  'pgflow: worker protocol 3 is not supported by this database (it speaks protocol 6): upgrade the worker (its pgflow library is older than this database''s schema)',
  'register_worker with protocol 3 is refused');
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', 7)$$, '0A000',
  'pgflow: worker protocol 7 is not supported by this database (it speaks protocol 6): upgrade the database with `pgflow migrate`',
  'register_worker with protocol 7 is refused');
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', null)$$, '0A000', 'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
  'register_worker without a protocol is refused');
select is((select count(*) from pgflow.workers) + (select count(*) from pgflow.worker_functions), 0::bigint,
          'the refused registrations wrote nothing');

select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'nope', 'nope', 4)$$, 'P0002',
  'Flow "nope" does not exist; compile it first (ensure_flow_compiled)', 'an unknown flow is refused');
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'other', 4)$$, '22023',
  'Queue "other" is not on the route of flow "myFlow" (its queue is "myflow")', 'a queue off the flow''s route is refused');
select throws_ok($$select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myFlow', 4)$$, '22023', 'Queue "myFlow" is not on the route of flow "myFlow" (its queue is "myflow")',
  'the queue must be given canonically (lowercase)');

select results_eq($$select worker_id, queue_name, function_name, protocol
                    from pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', 4)$$,
                  $$values ('11111111-1111-1111-1111-111111111111'::uuid, 'myflow'::text, 'fn'::text, 4)$$,
                  'a protocol-4 worker registers for its flow''s queue');
select results_eq($$select function_name, paused_at from pgflow.worker_functions$$, $$values ('fn'::text, null::timestamptz)$$,
                  'and its function is tracked, not paused');
select results_eq($$select protocol
                    from pgflow.register_worker('33333333-3333-3333-3333-333333333333', 'fn', 'myFlow', 'myflow', 5)$$,
                  $$values (5)$$, 'a protocol-5 worker registers too');

select pgflow.ensure_flow_compiled('stepped', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a']))), 4, 'step');
select throws_ok($$select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn2', 'stepped', 'stepped', 4)$$, '22023',
  'Queue "stepped" is not on the route of flow "stepped" (its step queues are stepped__a, stepped__b)',
  'a step-queued flow has no flow queue to register for');

select * from finish();
rollback;
