-- skip-cascade from a map task: the map step's siblings become skipped, its dependent map is
-- skipped (dependency_skipped) without ever sizing, and the counters add up to a completed run.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'items', step_type => 'map', when_exhausted => 'skip-cascade');
select pgflow.add_step('f', 'more', array['items'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset

select pgflow_tests.fail_step_task(:'run', 'items', 2) \g /dev/null
select results_eq($$select task_index, status from pgflow.step_tasks order by task_index$$,
                  $$values (0, 'skipped'), (1, 'skipped'), (2, 'failed')$$, 'siblings skipped');
select results_eq($$select step_slug, status, skip_reason, initial_tasks from pgflow.step_states order by step_slug$$,
                  $$values ('items', 'skipped', 'handler_failed', 3), ('more', 'skipped', 'dependency_skipped', null)$$,
                  'the map and its dependent map are skipped');
select results_eq($$select status, remaining_steps, output from pgflow.runs$$,
                  $$values ('completed', 0, null::jsonb)$$, 'the run completes');
select is((select count(*)::int from pgmq.q_f), 0, 'no message left');

select * from finish();
rollback;
