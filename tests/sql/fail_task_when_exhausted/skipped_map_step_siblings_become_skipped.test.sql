-- A map step skipped by when_exhausted: its queued and started sibling tasks become `skipped`
-- and their messages are archived; siblings that already completed stay completed.
begin;
select plan(6);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'items', step_type => 'map', when_exhausted => 'skip');
select run_id as run from pgflow.start_flow('f', '[0, 1, 2, 3]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 0, '"done"') \g /dev/null
select pgflow_tests.start_task(:'run', 'items', 2) \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'items', 1, 'bad') \g /dev/null

select results_eq($$select task_index, status, output from pgflow.step_tasks order by task_index$$,
                  $$values (0, 'completed', '"done"'::jsonb), (1, 'failed', null), (2, 'skipped', null), (3, 'skipped', null)$$,
                  'completed stays, the failing task failed, started and queued siblings skipped');
select is((select count(*)::int from pgmq.q_f), 0, 'no message left in the queue');
select is(array(select pgflow_tests.queue_msg_ids('f', true)),
          array(select message_id from pgflow.step_tasks order by message_id),
          'all four messages are archived');
select results_eq($$select status, output from pgflow.step_states$$, $$values ('skipped', null::jsonb)$$,
                  'the step is skipped without output');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', null::jsonb)$$,
                  'the run completes');
select is_empty($$select * from pgflow.start_tasks('f', array(select message_id from pgflow.step_tasks where status = 'skipped'),
                                                   '11111111-1111-1111-1111-111111111111')$$,
                'skipped tasks cannot be claimed again');

select * from finish();
rollback;
