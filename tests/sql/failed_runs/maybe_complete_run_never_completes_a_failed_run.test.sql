-- maybe_complete_run completes only a started run: a failed run with remaining_steps 0 stays
-- failed, without output or completed_at (upstream could overwrite it).
begin;
select plan(3);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
update pgflow.runs set remaining_steps = 0;

select pgflow.maybe_complete_run(:'run') \g /dev/null
select results_eq($$select status, completed_at, output from pgflow.runs$$,
                  $$values ('failed', null::timestamptz, null::jsonb)$$, 'still failed');
select is((select count(*)::int from realtime.messages where event = 'run:completed'), 0, 'no run:completed');
-- And a completed run is not completed twice.
select pgflow.create_flow('g');
select pgflow.add_step('g', 'only');
select run_id as run2 from pgflow.start_flow('g', '{}') \gset
select pgflow_tests.complete_step_task(:'run2', 'only') \g /dev/null
select pgflow.maybe_complete_run(:'run2') \g /dev/null
select is((select count(*)::int from realtime.messages where event = 'run:completed'), 1, 'run:completed once for the completed run');

select * from finish();
rollback;
