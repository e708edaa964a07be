-- A failed run starts nothing more: start_ready_steps returns without starting ready steps, and
-- its cancelled tasks cannot be claimed.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'breaks');
select pgflow.add_step('f', 'waiting');
select pgflow.add_step('f', 'after', array['waiting']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as waiting_msg from pgflow.step_tasks where step_slug = 'waiting' \gset
select pgflow_tests.fail_step_task(:'run', 'breaks') \g /dev/null

update pgflow.step_states set remaining_deps = 0 where step_slug = 'after';
select pgflow.start_ready_steps(:'run') \g /dev/null
select is((select status from pgflow.step_states where step_slug = 'after'), 'created', 'a ready step is not started');
select is_empty(format($$select * from pgflow.start_tasks('f', array[%s::bigint], '11111111-1111-1111-1111-111111111111')$$, :waiting_msg),
                'the cancelled task cannot be claimed');
select is((select status from pgflow.step_tasks where step_slug = 'waiting'), 'cancelled', 'it stays cancelled');

select * from finish();
rollback;
