-- The queued and started tasks of the skipped steps become `skipped` and their messages are
-- archived; other steps' tasks and messages are untouched.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'other');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset
select pgflow_tests.start_task(:'run', 'items', 1) \g /dev/null

select pgflow._cascade_force_skip_steps(:'run', 'items', 'condition_unmet') \g /dev/null
select results_eq($$select step_slug, task_index, status from pgflow.step_tasks order by step_slug, task_index$$,
                  $$values ('items', 0, 'skipped'), ('items', 1, 'skipped'), ('items', 2, 'skipped'), ('other', 0, 'queued')$$,
                  'items'' tasks (queued and started) are skipped; other''s is untouched');
select is(array(select pgflow_tests.queue_msg_ids('f', true)),
          array(select message_id from pgflow.step_tasks where step_slug = 'items' order by message_id),
          'items'' messages are archived');
select is(array(select pgflow_tests.queue_msg_ids('f')),
          array(select message_id from pgflow.step_tasks where step_slug = 'other'),
          'other''s message stays in the queue');

select * from finish();
rollback;
