-- A sibling task of a map step that was skipped (another task exhausted its retries with
-- when_exhausted = skip) is `skipped`; its late complete_task changes nothing: no output, the
-- step stays skipped, the run counter is not decremented again, the run output is unchanged.
begin;
select plan(6);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'items', step_type => 'map', when_exhausted => 'skip');
select pgflow.add_step('f', 'after', array['items']);
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset
select pgflow_tests.start_task(:'run', 'items', 1) \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'items', 0, 'bad item') \g /dev/null

select results_eq($$select task_index, status from pgflow.step_tasks where step_slug = 'items' order by task_index$$,
                  $$values (0, 'failed'), (1, 'skipped'), (2, 'skipped')$$, 'siblings are skipped');

select results_eq($$select status, output from pgflow.complete_task((select run_id from pgflow.runs), 'items', 1, '"late"')$$,
                  $$values ('skipped', null::jsonb)$$, 'the late call returns the skipped row unchanged');
select results_eq($$select status, output, completed_at from pgflow.step_tasks where step_slug = 'items' and task_index = 1$$,
                  $$values ('skipped', null::jsonb, null::timestamptz)$$, 'the task stays skipped without output');
select results_eq($$select status, skip_reason, output, remaining_tasks from pgflow.step_states where step_slug = 'items'$$,
                  $$values ('skipped', 'handler_failed', null::jsonb, null::int)$$, 'the step stays skipped');
select is((select remaining_steps from pgflow.runs), 1, 'remaining_steps is unchanged (after still to go)');
select is((select count(*)::int from pgmq.q_f where message->>'step_slug' = 'items'), 0,
          'no message of the skipped step is left in the queue');

select * from finish();
rollback;
