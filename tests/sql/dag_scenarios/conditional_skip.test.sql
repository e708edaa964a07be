-- Conditional branches: classify decides; premium (if) is skipped, standard (ifNot) runs;
-- notify depends on both and runs with standard's output only.
begin;
select plan(6);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'classify');
select pgflow.add_step('f', 'premium', array['classify'], required_input_pattern => '{"classify": {"tier": "premium"}}');
select pgflow.add_step('f', 'standard', array['classify'], forbidden_input_pattern => '{"classify": {"tier": "premium"}}');
select pgflow.add_step('f', 'notify', array['premium', 'standard']);
select run_id as run from pgflow.start_flow('f', '{"user": "u1"}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select pgflow.complete_task(run_id, step_slug, task_index, '{"tier": "standard"}') from c1 \g /dev/null
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states where step_slug in ('premium', 'standard') order by 1$$,
                  $$values ('premium', 'skipped', 'condition_unmet'), ('standard', 'started', null)$$, 'premium skipped, standard started');

create temp table c2 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c2$$, $$values ('standard', '{"classify": {"tier": "standard"}}'::jsonb)$$,
                  'only standard is claimable');
select pgflow.complete_task(run_id, step_slug, task_index, '"standard mail"') from c2 \g /dev/null

create temp table c3 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c3$$, $$values ('notify', '{"standard": "standard mail"}'::jsonb)$$,
                  'notify runs without the premium key');
select pgflow.complete_task(run_id, step_slug, task_index, '"sent"') from c3 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"notify": "sent"}'::jsonb)$$,
                  'the run completed');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'premium'), 0, 'premium never had a task');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:classify:started'), ('step:classify:completed'), ('step:premium:skipped'),
                           ('step:standard:started'), ('step:standard:completed'), ('step:notify:started'),
                           ('step:notify:completed'), ('run:completed')$$,
                  'events in order');

select * from finish();
rollback;
