-- A flow limit caps the admitted tasks of all its steps together, beside step limits; map
-- tasks count one each; an admitted task still waits out its step's start_delay; a resumed
-- run's tasks wait for slots again; flows without limits queue as before (no gate).
begin;
select plan(10);
set constraints all immediate;

select pgflow.ensure_flow_compiled('shared', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('a', options => '{"maxAttempts": 1}'), pgflow_tests.step_shape('b'),
         pgflow_tests.step_shape('items', step_type => 'map'))), pgflow.worker_protocol(),
         'flow', null, null, '{"concurrencyLimit": 5, "steps": {"a": {"concurrencyLimit": 1}}}')->>'status';
select pgflow.start_run('shared', '[1, 2, 3, 4]');
select pgflow.start_run('shared', '[5, 6]');
select results_eq($$select step_slug, count(*) filter (where gate = 'admitted'), count(*) filter (where gate = 'held')
                    from pgflow.step_tasks where flow_slug = 'shared' group by step_slug order by step_slug$$,
                  $$values ('a'::text, 1::bigint, 1::bigint), ('b', 1, 1), ('items', 3, 3)$$,
                  'five slots in all, oldest first, at most one for step a; map tasks count one each');
select is((select count(*) from pgmq.q_shared where vt <= clock_timestamp()), 5::bigint, 'five messages are visible');

-- The run holding a's slot fails: its tasks end, freeing four slots for the waiting tasks.
select run_id as first_run from pgflow.runs where flow_slug = 'shared' and input = '[1, 2, 3, 4]' \gset
select pgflow_tests.start_task(:'first_run', 'a');
select pgflow.fail_task(:'first_run', 'a', 0, 'boom');
select is((select status from pgflow.runs where run_id = :'first_run'), 'failed', 'the first run failed');
select results_eq($$select step_slug, count(*) filter (where gate = 'admitted' and status in ('queued', 'started')),
                           count(*) filter (where gate = 'held' and status = 'queued')
                    from pgflow.step_tasks where flow_slug = 'shared' group by step_slug order by step_slug$$,
                  $$values ('a'::text, 1::bigint, 0::bigint), ('b', 1, 0), ('items', 2, 0)$$,
                  'the second run''s tasks all get slots (its a task is admitted now)');

-- Resuming the failed run queues its ended tasks again, held, and admits them as slots allow.
select pgflow.resume_run(:'first_run');
select results_eq(format($$select gate, count(*) from pgflow.step_tasks
                           where run_id = %L and status = 'queued' group by gate order by gate$$, :'first_run'),
                  $$values ('admitted'::text, 1::bigint), ('held', 5)$$,
                  'a resumed run''s tasks wait held again; one fits beside the second run''s four');
select is((select count(*) from pgflow.step_tasks where flow_slug = 'shared' and gate = 'admitted' and status in ('queued', 'started')),
          5::bigint, 'the flow still holds five slots');
select is((select count(*) from pgmq.q_shared where vt <= clock_timestamp()), 5::bigint,
          'and five messages are visible');

-- start_delay: an admitted task's message becomes visible when the delay since queueing ends.
select pgflow.ensure_flow_compiled('delayed', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('later', options => '{"startDelay": 60}'))), pgflow.worker_protocol(),
         'flow', null, null, '{"concurrencyLimit": 1}')->>'status';
select pgflow.start_run('delayed', '{}');
select ok((select vt between now() + interval '55 seconds' and now() + interval '65 seconds' from pgmq.q_delayed),
          'an admitted task of a delayed step becomes visible after its start delay');

-- Flows without limits: no gate, visible at once, as before; nothing is recorded for admission
-- at commit (checked with admission deferred again, as it is by default).
select pgflow_tests.setup_flow('sequential');
set constraints all deferred;
select pgflow.start_run('sequential', '{}');
select is((select gate from pgflow.step_tasks where flow_slug = 'sequential'), null, 'an unlimited flow''s task has no gate');
select is(coalesce(current_setting('pgflow.gated_flows', true), ''), '', 'and records nothing for admission');

select * from finish();
rollback;
