-- An empty root map completes at start and makes its dependent ready; when that dependent's
-- unmet condition fails the run, nothing else has started: the other root step stays created
-- with no task and no message, and the events are run:started, the map's completion, the
-- dependent's failure and run:failed, with no step:started among them.
begin;
select plan(4);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'fetch');
select pgflow.add_step('f', 'check', array['items'], required_input_pattern => '{"items": [1]}', when_unmet => 'fail');
select run_id as run from pgflow.start_flow('f', '[]') \gset

select is((select status from pgflow.runs), 'failed', 'the run failed at start');
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('check', 'failed'), ('fetch', 'created'), ('items', 'completed')$$,
                  'the other root step never started');
select results_eq($$select count(*) from pgflow.step_tasks union all select active + archived from pgflow_tests.queue_counts('f')$$,
                  $$values (0::bigint), (0::bigint)$$, 'no task and no message');
select results_eq(format($$select event from pgflow_tests.realtime_events(%L)$$, :'run'),
                  $$values ('run:started'), ('step:items:completed'), ('step:check:failed'), ('run:failed')$$,
                  'events: run:started, the map, the failed check, run:failed');

select * from finish();
rollback;
