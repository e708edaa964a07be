-- start_run_by_slug starts the concrete version named, active or not, and returns the run id;
-- an alias is not a slug (P0002 naming it); the alias is left as it was.
begin;
select plan(5);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');

select pgflow.start_run_by_slug('greetUserV2', '{"a": 1}') as inactive_run \gset
select is((select flow_slug from pgflow.runs where run_id = :'inactive_run'), 'greetUserV2',
          'an inactive version starts when pinned');
select is(pgflow.start_run_by_slug('greetUserV1', '{"a": 2}', '00000000-0000-0000-0000-0000000000ac'),
          '00000000-0000-0000-0000-0000000000ac'::uuid, 'so does the active one, with a given run id');
select is((select (flow_slug, input)::text from pgflow.runs where run_id = '00000000-0000-0000-0000-0000000000ac'),
          '(greetUserV1,"{""a"": 2}")', 'and the input');
select throws_ok($$select pgflow.start_run_by_slug('greetUser', '{}')$$, 'P0002', 'Flow "greetUser" does not exist',
                 'an alias is not a concrete slug');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV1', 'pinned starts never change the alias');

select * from finish();
rollback;
