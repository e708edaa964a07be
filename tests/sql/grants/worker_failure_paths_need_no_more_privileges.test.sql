-- The worker's less common paths under pgflow_worker: an exhausted step failing its run (other
-- tasks cancelled, their messages archived), a type violation, late results for cancelled
-- tasks, a message deferred because its task is still running, a foreign message archived, and
-- a fatal claim that pauses the worker's function.
begin;
select plan(21);

\i _install_as_owner.sql
\i _worker_statements.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
-- (the test-only helpers; nothing of pgflow's)
grant usage on schema pgflow_tests to grants_worker_login;
create role grants_app_login nologin in role pgflow_starter;

-- a, b, list: roots (one attempt each); items maps over list.
select jsonb_build_object(
         'options', jsonb_build_object('maxAttempts', 1, 'timeout', 5),
         'steps', jsonb_build_array(
           pgflow_tests.step_shape('a'),
           pgflow_tests.step_shape('b'),
           pgflow_tests.step_shape('list'),
           pgflow_tests.step_shape('items', array['list'], 'map')))::text as shape \gset

set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_failing', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          'the worker compiles its flow');
select lives_ok($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000002', 'grants-failing-worker',
                                                'grants_failing', 'grants_failing', pgflow.worker_protocol())$$, 'and registers');
reset session authorization;

set session authorization grants_app_login;
select pgflow.start_flow_with_states('grants_failing', '{}', 'c0000000-0000-0000-0000-000000000011') is not null as started;
select pgflow.start_flow_with_states('grants_failing', '{}', 'c0000000-0000-0000-0000-000000000012') is not null as started;
reset session authorization;

set session authorization grants_worker_login;
select is((select count(*) from pg_temp.read_and_claim('grants_failing', 'grants_failing', 'b0000000-0000-0000-0000-000000000002')
           where outcome = 'claimed'), 6::bigint, 'claims the root tasks of both runs');
-- Run 1: a type violation fails the run.
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000011', 'list', 0, '{"not": "an array"}')))$$,
                  $$values ('list', 'failed')$$, 'a type violation fails the task');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(
                      pg_temp.result('c0000000-0000-0000-0000-000000000011', 'a', 0, '1'),
                      pg_temp.result('c0000000-0000-0000-0000-000000000011', 'b', 0, '2')))$$,
                  $$values ('a', 'cancelled'), ('b', 'cancelled')$$,
                  'late results for the cancelled tasks change nothing');
-- Run 2: an exhausted step fails the run.
select results_eq($$select * from pg_temp.fail_batch(jsonb_build_array(pg_temp.failure('c0000000-0000-0000-0000-000000000012', 'a', 0, 'boom')))$$,
                  $$values ('a', 'failed')$$, 'an exhausted task fails');
select results_eq($$select * from pg_temp.fail_batch(jsonb_build_array(pg_temp.failure('c0000000-0000-0000-0000-000000000012', 'b', 0, 'late')))$$,
                  $$values ('b', 'cancelled')$$, 'a late failure for a cancelled task changes nothing');
reset session authorization;

select results_eq($$select run_id::text, status from pgflow.runs order by run_id$$,
                  $$values ('c0000000-0000-0000-0000-000000000011', 'failed'),
                           ('c0000000-0000-0000-0000-000000000012', 'failed')$$,
                  'both runs failed');
select is((select (active, archived) from pgflow_tests.queue_counts('grants_failing'))::text, '(0,6)',
          'every message of both runs was archived');

-- A running task's message becomes visible again (its worker is slow): deferred, not claimed.
set session authorization grants_app_login;
select pgflow.start_flow_with_states('grants_failing', '{}', 'c0000000-0000-0000-0000-000000000013') is not null as started;
reset session authorization;
set session authorization grants_worker_login;
select is((select count(*) from pg_temp.read_and_claim('grants_failing', 'grants_failing', 'b0000000-0000-0000-0000-000000000002')
           where outcome = 'claimed'), 3::bigint, 'claims the third run''s tasks');
reset session authorization;
select pgflow_tests.reset_message_visibility('grants_failing');
set session authorization grants_worker_login;
select is(array(select distinct outcome from pg_temp.read_and_claim('grants_failing', 'grants_failing', 'b0000000-0000-0000-0000-000000000002')),
          array['deferred'], 'messages of running tasks are deferred');
reset session authorization;

-- Messages nobody should have sent.
select pgmq.send('grants_failing', '{"hello": "world"}') is not null as sent;
set session authorization grants_worker_login;
select results_eq($$select outcome, reason from pg_temp.read_and_claim('grants_failing', 'grants_failing', 'b0000000-0000-0000-0000-000000000002')$$,
                  $$values ('archived', 'foreign message without a pgflow task address')$$,
                  'a foreign message is archived');
reset session authorization;
select pgmq.send('grants_failing', '{"run_id": "c0000000-0000-0000-0000-000000000099", "step_slug": "a", "task_index": 0}') is not null as sent;
set session authorization grants_worker_login;
select is(array(select outcome from pg_temp.read_and_claim('grants_failing', 'grants_failing', 'b0000000-0000-0000-0000-000000000002')),
          array['fatal'], 'pgflow-shaped work without a task is a fatal claim');
select pgflow_tests.throws_like($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000003', 'grants-failing-worker',
                                                 'grants_failing', 'grants_failing', pgflow.worker_protocol())$$,
  '55000', 'Worker function "grants-failing-worker" is paused since % (fatal claim on queue "grants_failing": unsupported message(s) %)%',
  'the fatal claim paused the worker function: it cannot register again');
reset session authorization;
select isnt((select paused_at from pgflow.worker_functions where function_name = 'grants-failing-worker'), null,
            'the function is paused');
-- The pause is one way for the worker: only the owner (an operator) lifts it.
set session authorization grants_worker_login;
select throws_ok($$update pgflow.worker_functions set paused_at = null, pause_reason = null
                   where function_name = 'grants-failing-worker'$$,
                 '42501', 'permission denied for table worker_functions',
                 'the worker cannot clear the pause');
select throws_ok($$select pgflow.resume_worker_function('grants-failing-worker')$$,
                 '42501', 'permission denied for table worker_functions',
                 'nor resume its function through the operator command');
reset session authorization;
select isnt((select paused_at from pgflow.worker_functions where function_name = 'grants-failing-worker'), null,
            'the function is still paused');
set role grants_owner;
select lives_ok($$select pgflow.resume_worker_function('grants-failing-worker')$$, 'the owner resumes it');
reset role;
set session authorization grants_worker_login;
select lives_ok($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000004', 'grants-failing-worker',
                                                'grants_failing', 'grants_failing', pgflow.worker_protocol())$$,
                'and the worker registers again');
reset session authorization;
select is(array(select pg_temp.owned_by('pgflow_worker') union all select pg_temp.owned_by('grants_worker_login')),
          '{}'::text[], 'the worker still owns nothing');

select * from finish();
rollback;
