-- Starting an alias resolves it in the same call; the run, its step states and tasks, its
-- messages, its broadcasts and get_run_with_states carry the concrete slug (the latter also the
-- alias). Alias names never appear in queue names.
begin;
select plan(8);

select pgflow_tests.install_realtime_stub();
select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');

select run_id as run from pgflow.start_flow('greetUser', '{"name": "Ada"}') \gset
select is((select flow_slug from pgflow.runs where run_id = :'run'), 'greetUserV2', 'the run carries the concrete slug');
select results_eq($$select distinct flow_slug, queue_name from pgflow.step_tasks where run_id = '$$ || :'run' || $$'$$,
                  $$values ('greetUserV2'::text, 'greetuserv2'::text)$$, 'so do its tasks, in that version''s queue');
select is((select message->>'flow_slug' from pgmq.q_greetuserv2), 'greetUserV2', 'and its message');
select is(array(select distinct payload->>'flow_slug' from pgflow_tests.realtime_events(:'run')
                where payload ? 'flow_slug'), array['greetUserV2'],
          'and its broadcasts (those that name a flow)');
select is(pgflow.get_run_with_states(:'run')->'run'->>'flow_slug', 'greetUserV2', 'get_run_with_states: the concrete slug');
select is(pgflow.get_run_with_states(:'run')->>'flow_alias', 'greetUser', 'and the alias it was deployed under');
select is(pgflow.start_flow_with_states('greetUser', '{}')->'run'->>'flow_slug', 'greetUserV2',
          'start_flow_with_states resolves the alias too');
select is((select count(*) from pgmq.meta where queue_name like '%greetuser\_%' or queue_name = 'greetuser'), 0::bigint,
          'no queue is named after the alias');

select * from finish();
rollback;
