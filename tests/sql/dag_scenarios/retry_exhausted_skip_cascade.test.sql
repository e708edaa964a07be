-- Retries exhausted with when_exhausted = skip-cascade: the step and its dependents are
-- skipped, the independent branch finishes and the run completes with its output.
begin;
select plan(5);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'optional', when_exhausted => 'skip-cascade');
select pgflow.add_step('f', 'uses_optional', array['optional']);
select pgflow.add_step('f', 'main');
select run_id as run from pgflow.start_flow('f', '{}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select pgflow.fail_task(run_id, step_slug, task_index, 'optional failed') from c1 where step_slug = 'optional' \g /dev/null
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('main', 'started', null), ('optional', 'skipped', 'handler_failed'),
                           ('uses_optional', 'skipped', 'dependency_skipped')$$, 'optional and its dependent skipped');
select pgflow.complete_task(run_id, step_slug, task_index, '"main done"') from c1 where step_slug = 'main' \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"main": "main done"}'::jsonb)$$,
                  'the run completed with main only');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'uses_optional'), 0, 'the dependent never had a task');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 2::bigint), 'all messages archived');
select results_eq($$select event, payload->>'skip_reason' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started', null), ('step:main:started', null), ('step:optional:started', null),
                           ('step:optional:skipped', 'handler_failed'), ('step:uses_optional:skipped', 'dependency_skipped'),
                           ('step:main:completed', null), ('run:completed', null)$$,
                  'events in order');

select * from finish();
rollback;
