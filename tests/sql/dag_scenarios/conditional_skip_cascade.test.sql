-- A root gate with when_unmet = skip-cascade: with the feature off, gate and its whole subtree
-- are skipped at start; the independent audit step runs and the run completes with its output.
begin;
select plan(5);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'gate', required_input_pattern => '{"enabled": true}', when_unmet => 'skip-cascade');
select pgflow.add_step('f', 'work', array['gate']);
select pgflow.add_step('f', 'report', array['work']);
select pgflow.add_step('f', 'audit');
select run_id as run from pgflow.start_flow('f', '{"enabled": false}') \gset

select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('audit', 'started', null), ('gate', 'skipped', 'condition_unmet'),
                           ('report', 'skipped', 'dependency_skipped'), ('work', 'skipped', 'dependency_skipped')$$,
                  'the gate subtree is skipped at start');
create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug from c1$$, $$values ('audit')$$, 'only audit is claimable');
select pgflow.complete_task(run_id, step_slug, task_index, '"audited"') from c1 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"audit": "audited"}'::jsonb)$$,
                  'the run completed; the skipped leaf report is not in the output');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 1::bigint), 'one message, archived');
select results_eq($$select event, payload->>'skip_reason' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started', null), ('step:gate:skipped', 'condition_unmet'), ('step:work:skipped', 'dependency_skipped'),
                           ('step:report:skipped', 'dependency_skipped'), ('step:audit:started', null),
                           ('step:audit:completed', null), ('run:completed', null)$$,
                  'events in order');

select * from finish();
rollback;
