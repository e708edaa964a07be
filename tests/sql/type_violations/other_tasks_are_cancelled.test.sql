-- The run's other unfinished tasks (queued or started) become `cancelled`; completed ones stay.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select pgflow.add_step('f', 'done');
select pgflow.add_step('f', 'running');
select pgflow.add_step('f', 'waiting');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'done') \g /dev/null
select pgflow_tests.start_task(:'run', 'running') \g /dev/null

select pgflow_tests.complete_step_task(:'run', 'list', 0, '"x"') \g /dev/null
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('done', 'completed'), ('list', 'failed'), ('running', 'cancelled'), ('waiting', 'cancelled')$$,
                  'running and waiting are cancelled');

select * from finish();
rollback;
