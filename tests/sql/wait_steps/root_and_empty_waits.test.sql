-- A wait step without dependencies waits from the run's start (a sleep of 0 s completes at
-- once); a map wait over an empty array has nothing to wait for and completes with [].
begin;
select plan(5);

select pgflow.create_flow('gate');
select pgflow.add_wait_step('gate', 'approve', '{"kind": "signal"}');
select pgflow.add_step('gate', 'work', array['approve']);
select run_id as run from pgflow.start_flow('gate', '{}') \gset
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: waiting'], 'a root wait step waits from the start');
select is(pgflow.send_signal(:'run', 'approve', 'go', '{"go": true}'), 'delivered', 'a signal completes it');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: completed', 'work/0: queued'], 'and its dependent is queued');

select pgflow.create_flow('nap_first');
select pgflow.add_wait_step('nap_first', 'nap', '{"kind": "sleep", "seconds": 0}');
select is((select status from pgflow.start_flow('nap_first', '{}')), 'completed', 'a root sleep of 0 s completes the run at once');

select pgflow_tests.setup_wait_flow('reviews', step_type => 'map');
select run_id as empty from pgflow.start_flow('reviews', '{}') \gset
select pgflow_tests.complete_step_task(:'empty', 'draft', 0, '[]');
select is((select output from pgflow.step_states where run_id = :'empty' and step_slug = 'approve'), '[]'::jsonb,
          'a map wait over no elements completes with []');

select * from finish();
rollback;
