-- A complete worker cycle under pgflow_worker, with runs started under pgflow_starter, for a
-- flow the worker compiled itself: claims (pgmq.read inside claim_tasks), batched completions
-- and failures, a retry, a skipped condition, a map, stall recovery (an offer declined while
-- another pass is recent, then a pass),
-- an exhausted step skipped, the run completed, the run input read lazily, heartbeat, stop,
-- and the poll-only worker's look at its idle queue (has_visible_work).
-- Every statement is the worker's own (see _worker_statements.sql).
begin;
select plan(33);

\i _install_as_owner.sql
\i _worker_statements.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
create role grants_app_login nologin in role pgflow_starter;

-- fetch -> each (map) -> report (1 attempt, skipped when exhausted); gated never runs.
select jsonb_build_object(
         'options', jsonb_build_object('baseDelay', 0, 'maxAttempts', 3, 'timeout', 5),
         'steps', jsonb_build_array(
           pgflow_tests.step_shape('fetch'),
           pgflow_tests.step_shape('each', array['fetch'], 'map'),
           pgflow_tests.step_shape('gated', array['fetch'], required => '{"fetch": {"go": true}}'),
           pgflow_tests.step_shape('report', array['each'], when_exhausted => 'skip',
                                   options => '{"maxAttempts": 1}')))::text as shape \gset

-- Startup.
set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_cycle', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          'the worker compiles its new flow');
select lives_ok($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000001', 'grants-cycle-worker', 'grants_cycle',
                                                'grants_cycle', pgflow.worker_protocol())$$, 'and registers');
reset session authorization;

-- A run, started by the application.
set session authorization grants_app_login;
select is(pgflow.start_flow_with_states('grants_cycle', '{"n": 2}', 'c0000000-0000-0000-0000-000000000001')->'run'->>'status', 'started',
          'the application starts a run');
reset session authorization;

set session authorization grants_worker_login;
-- fetch: a poll-only worker looks at its idle queue first (kHasVisibleWork)
select is(pgflow.has_visible_work('b0000000-0000-0000-0000-000000000001'), true,
          'the look: the run''s root task is visible');
select results_eq($$select outcome, step_slug, attempt, flow_input from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001')$$,
                  $$values ('claimed', 'fetch', 1, '{"n": 2}')$$,
                  'claim: the root task, with the run input');
select is(pgflow.has_visible_work('b0000000-0000-0000-0000-000000000001'), false,
          'and nothing once it is claimed');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000001', 'fetch', 0, '[10, 20]')))$$,
                  $$values ('fetch', 'completed')$$,
                  'complete: reported through the batch statement');
-- each: two tasks; one completes, one fails and is retried at once (base delay 0)
select results_eq($$select outcome, step_slug, task_index, input from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001') order by task_index$$,
                  $$values ('claimed', 'each', 0, '10'), ('claimed', 'each', 1, '20')$$,
                  'the map started with one task per element');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000001', 'each', 0, '"a"')))$$,
                  $$values ('each', 'completed')$$, 'one map task completes');
select results_eq($$select * from pg_temp.fail_batch(jsonb_build_array(pg_temp.failure('c0000000-0000-0000-0000-000000000001', 'each', 1, 'boom')))$$,
                  $$values ('each', 'queued')$$, 'fail: the other fails and is queued for a retry');
select results_eq($$select outcome, step_slug, task_index, attempt from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001')$$,
                  $$values ('claimed', 'each', 1, 2)$$, 'the retry is claimed (attempt 2)');
reset session authorization;

-- The worker of attempt 2 dies: its task stays started past the timeout.
update pgflow.step_tasks set queued_at = now() - interval '10 minutes', started_at = now() - interval '10 minutes'
where run_id = 'c0000000-0000-0000-0000-000000000001' and step_slug = 'each' and task_index = 1;
-- Another worker's pass completed a moment ago.
update pgflow.locks set last_completed_at = clock_timestamp() - interval '1 second' where lock_name = 'stall_recovery';
select last_completed_at as recent_pass from pgflow.locks where lock_name = 'stall_recovery' \gset

set session authorization grants_worker_login;
select is(pg_temp.recover_stalled('1 minute'), 0, 'an offer within a minute of the last pass runs none');
select is((select status from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000001'
           and step_slug = 'each' and task_index = 1), 'started', 'so the stalled task is not requeued yet');
select is((select last_completed_at from pgflow.locks where lock_name = 'stall_recovery'), :'recent_pass'::timestamptz,
          'and no pass is recorded');
select is(pg_temp.recover_stalled(), 1, 'an offer without a window runs a pass, which requeues it');
select results_eq($$select outcome, step_slug, task_index, attempt from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001')$$,
                  $$values ('claimed', 'each', 1, 3)$$, 'and it is claimed again (attempt 3)');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000001', 'each', 1, '"b"')))$$,
                  $$values ('each', 'completed')$$, 'and completes');
-- report: one attempt, skipped when exhausted
select results_eq($$select outcome, step_slug, input from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001')$$,
                  $$values ('claimed', 'report', '{"each": ["a", "b"]}')$$,
                  'the dependent step gets the aggregated map output');
select results_eq($$select * from pg_temp.fail_batch(jsonb_build_array(pg_temp.failure('c0000000-0000-0000-0000-000000000001', 'report', 0, 'nope')))$$,
                  $$values ('report', 'failed')$$, 'its only attempt fails');
select is_empty($$select * from pg_temp.read_and_claim('grants_cycle', 'grants_cycle', 'b0000000-0000-0000-0000-000000000001')$$,
                'nothing is left to claim');
select is((select input from pgflow.runs where run_id = 'c0000000-0000-0000-0000-000000000001'), '{"n": 2}'::jsonb,
          'the worker reads a run input lazily');
select is(pgflow.worker_heartbeat('b0000000-0000-0000-0000-000000000001'), false, 'heartbeat');
select is(pg_temp.recover_stalled(), 0, 'stall recovery finds nothing more');
select lives_ok($$select pgflow.mark_worker_stopped('b0000000-0000-0000-0000-000000000001')$$, 'the worker stops');
reset session authorization;

-- The outcome, read by the application.
set session authorization grants_app_login;
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000001')->'run'->>'status', 'completed', 'the run completed');
select results_eq($$select s->>'step_slug', s->>'status', s->>'skip_reason' from jsonb_array_elements(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000001')->'steps') s$$,
                  $$values ('fetch', 'completed', null), ('each', 'completed', null),
                           ('gated', 'skipped', 'condition_unmet'), ('report', 'skipped', 'handler_failed')$$,
                  'every step ended as the flow says');
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000001')->'steps'->1->'output', '["a", "b"]'::jsonb, 'the map output');
reset session authorization;

select results_eq($$select attempts_count, requeued_count from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000001' and step_slug = 'each' order by task_index$$,
                  $$values (1, 0), (3, 1)$$, 'the retried task: 3 attempts, one requeue');
select is((select last_worker_id from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000001' and step_slug = 'report'),
          'b0000000-0000-0000-0000-000000000001'::uuid, 'tasks record the worker that claimed them');
select is((select (active, archived) from pgflow_tests.queue_counts('grants_cycle'))::text, '(0,4)',
          'every message of the run was archived');
select isnt((select stopped_at from pgflow.workers where worker_id = 'b0000000-0000-0000-0000-000000000001'), null, 'the worker row is stopped');
select is((select last_heartbeat_at is not null from pgflow.workers where worker_id = 'b0000000-0000-0000-0000-000000000001'), true,
          'and has its heartbeat');
select is(array(select pg_temp.owned_by('pgflow_worker') union all select pg_temp.owned_by('grants_worker_login')),
          '{}'::text[], 'the worker still owns nothing');

select * from finish();
rollback;
