-- start_ready_steps does nothing for a failed or completed run (nor for an unknown run).
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
update pgflow.step_states set remaining_deps = 0 where step_slug = 'second';
update pgflow.runs set status = 'failed', failed_at = now() where run_id = :'run';
select pgflow.start_ready_steps(:'run');
select is((select status from pgflow.step_states where step_slug = 'second'), 'created', 'failed run: nothing starts');

update pgflow.runs set status = 'completed', failed_at = null, completed_at = now() where run_id = :'run';
select pgflow.start_ready_steps(:'run');
select is((select count(*) from pgflow.step_tasks where step_slug = 'second'), 0::bigint, 'completed run: nothing starts');

select lives_ok($$select pgflow.start_ready_steps('00000000-0000-0000-0000-000000000000')$$, 'unknown run: no error');

select * from finish();
rollback;
