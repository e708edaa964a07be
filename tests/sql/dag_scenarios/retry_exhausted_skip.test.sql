-- Retries exhausted with when_exhausted = skip: the step is skipped (handler_failed), its
-- dependent still runs (without its key) and the run completes.
begin;
select plan(5);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 2, base_delay => 1);
select pgflow.add_step('f', 'enrich', when_exhausted => 'skip');
select pgflow.add_step('f', 'save', array['enrich']);
select run_id as run from pgflow.start_flow('f', '{"id": 1}') \gset

select pgflow.fail_task(run_id, step_slug, task_index, 'enrich down') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select pgflow_tests.reset_message_visibility('f');
select pgflow.fail_task(run_id, step_slug, task_index, 'enrich still down') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select results_eq($$select status, skip_reason, error_message from pgflow.step_states where step_slug = 'enrich'$$,
                  $$values ('skipped', 'handler_failed', 'enrich still down')$$, 'enrich skipped after 2 attempts');

create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c1$$, $$values ('save', '{}'::jsonb)$$, 'save runs without enrich''s key');
select pgflow.complete_task(run_id, step_slug, task_index, '"saved"') from c1 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"save": "saved"}'::jsonb)$$,
                  'the run completed');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 2::bigint), 'all messages archived');
select results_eq($$select event, payload->>'skip_reason' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started', null), ('step:enrich:started', null), ('step:enrich:skipped', 'handler_failed'),
                           ('step:save:started', null), ('step:save:completed', null), ('run:completed', null)$$,
                  'events in order');

select * from finish();
rollback;
