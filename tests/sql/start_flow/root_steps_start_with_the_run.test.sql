-- start_flow creates root steps started (no second write of their step state): each has its
-- tasks and messages, started_at is the run's start, and the events come as before: run:started,
-- then step:started per root step in step_slug order; a step with dependencies stays created.
-- With an empty root map the order of the usual path is kept: the taskless map completes
-- first, then the other root step starts.
begin;
select plan(6);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'zeta');
select pgflow.add_step('f', 'alpha', step_type => 'map');
select pgflow.add_step('f', 'after', array['zeta']);
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset

select results_eq($$select step_slug, status, initial_tasks, remaining_tasks, started_at = now()
                    from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'created', 1, null::int, null::boolean),
                           ('alpha', 'started', 2, 2, true), ('zeta', 'started', 1, 1, true)$$,
                  'root steps are started with their task counts; the dependent step waits');
select results_eq($$select step_slug, task_index, status, message_id is not null from pgflow.step_tasks
                    order by step_slug, task_index$$,
                  $$values ('alpha', 0, 'queued', true), ('alpha', 1, 'queued', true), ('zeta', 0, 'queued', true)$$,
                  'one queued task with a message per unit of work');
select is((select active from pgflow_tests.queue_counts('f')), 3::bigint, 'three messages in the flow''s queue');
select results_eq(format($$select event from pgflow_tests.realtime_events(%L)$$, :'run'),
                  $$values ('run:started'), ('step:alpha:started'), ('step:zeta:started')$$,
                  'run:started, then step:started in step_slug order');

select run_id as empty_run from pgflow.start_flow('f', '[]') \gset
select results_eq(format($$select step_slug, status from pgflow.step_states where run_id = %L order by step_slug$$, :'empty_run'),
                  $$values ('after', 'created'), ('alpha', 'completed'), ('zeta', 'started')$$,
                  'an empty root map completes taskless; the other root step starts');
select results_eq(format($$select event from pgflow_tests.realtime_events(%L)$$, :'empty_run'),
                  $$values ('run:started'), ('step:alpha:completed'), ('step:zeta:started')$$,
                  'in that order: run:started, the taskless completion, then step:started');

select * from finish();
rollback;
