-- A type violation fails the run and archives every active message of the run: the violating
-- task's and those of other queued or started tasks.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select pgflow.add_step('f', 'other_a');
select pgflow.add_step('f', 'other_b');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'other_a') \g /dev/null

select pgflow_tests.complete_step_task(:'run', 'list', 0, '{"not": "an array"}') \g /dev/null
select results_eq($$select status, (failed_at is not null), output from pgflow.runs$$,
                  $$values ('failed', true, null::jsonb)$$, 'the run failed');
select is((select count(*)::int from pgmq.q_f), 0, 'the queue is empty');
select is(array(select pgflow_tests.queue_msg_ids('f', true)), array(select message_id from pgflow.step_tasks order by message_id),
          'all three messages are archived');
select is((select status from pgflow.step_states where step_slug = 'each'), 'created', 'the map never starts');

select * from finish();
rollback;
