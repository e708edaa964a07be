-- A queued task is claimable only while its run and its step are started.
begin;
select plan(4);

select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{}') \gset
select pgflow_tests.ensure_worker('two_roots');

-- Simulate leftovers: a step that ended while its task row stayed queued.
update pgflow.step_states set status = 'skipped', skip_reason = 'condition_unmet', skipped_at = now(),
                              remaining_tasks = null
where step_slug = 'root_a';
select is_empty($$select * from pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_a'),
                                                    '11111111-1111-1111-1111-111111111111')$$,
                'not claimed when the step is not started');
select is((select status from pgflow.step_tasks where step_slug = 'root_a'), 'queued', 'the task stays queued');

update pgflow.runs set status = 'failed', failed_at = now() where run_id = :'run';
select is_empty($$select * from pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_b'),
                                                    '11111111-1111-1111-1111-111111111111')$$,
                'not claimed when the run is not started');
select is((select attempts_count from pgflow.step_tasks where step_slug = 'root_b'), 0, 'no attempt was counted');

select * from finish();
rollback;
