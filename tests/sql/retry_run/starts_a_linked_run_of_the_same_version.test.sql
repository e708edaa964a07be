-- retry_run starts a new run of the failed (or cancelled) run's concrete version — not the
-- alias's active one — with the same input, linked by restart_of_run_id; the original stays as
-- it was; a caller's new_run_id makes a repeated retry fail instead of starting twice.
begin;
select plan(6);
select pgflow_tests.deploy('greetV1', 'greet', jsonb_build_array(pgflow_tests.step_shape('only', options => '{"maxAttempts": 1}')));
select pgflow_tests.deploy('greetV2', 'greet');
select run_id as failed from pgflow.start_flow('greet', '{"name": "Ada"}') \gset
select pgflow.activate_flow_version('greet', 'greetV2', 'greetV1') \g /dev/null
select pgflow_tests.fail_step_task(:'failed', 'only') \g /dev/null
create temp table before as select * from pgflow.runs;

select pgflow.retry_run(:'failed', '00000000-0000-0000-0000-0000000000a1') as retried \gset
select is(:'retried'::uuid, '00000000-0000-0000-0000-0000000000a1'::uuid, 'returns the new run''s id (the one given)');
select results_eq(format($$select flow_slug, status, input, restart_of_run_id from pgflow.runs where run_id = %L$$, :'retried'),
                  format($$values ('greetV1'::text, 'started'::text, '{"name": "Ada"}'::jsonb, %L::uuid)$$, :'failed'),
                  'a started run of the same version with the same input, linked to the original');
select is((select count(*)::int from (select * from pgflow.runs where run_id = :'failed' except select * from before) x), 0,
          'the original is unchanged');
select pgflow_tests.throws_like(format($$select pgflow.retry_run(%L, '00000000-0000-0000-0000-0000000000a1')$$, :'failed'), '23505',
                 'Run id 00000000-0000-0000-0000-0000000000a1 is taken: %', 'the same new_run_id cannot start twice, and the error names it');

select run_id as cancelled from pgflow.start_flow('greet', '{"name": "Bo"}') \gset
select pgflow.cancel_run(:'cancelled') \g /dev/null
select pgflow.retry_run(:'cancelled') as retried_cancelled \gset
select is((select (flow_slug, input, restart_of_run_id)::text from pgflow.runs where run_id = :'retried_cancelled'),
          format('(greetV2,"{""name"": ""Bo""}",%s)', :'cancelled'), 'a cancelled run is retried too');
select is((select count(*)::int from pgflow.runs), 4, 'one new run per retry');

select * from finish();
rollback;
