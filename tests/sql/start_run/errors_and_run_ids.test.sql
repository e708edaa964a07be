-- start_run takes a caller's run id (a second start with it fails: retry safety), names an
-- unknown alias (P0002, no fallback to a slug), refuses SQL NULL input like start_flow, and
-- starts the active version of an alias; a failed call leaves no run.
begin;
select plan(7);

select pgflow_tests.setup_flow('sequential');
select is(pgflow.start_run('sequential', '{}', '00000000-0000-0000-0000-0000000000ab'),
          '00000000-0000-0000-0000-0000000000ab'::uuid, 'the given run id is returned');
select pgflow_tests.throws_like($$select pgflow.start_run('sequential', '{}', '00000000-0000-0000-0000-0000000000ab')$$,
                 '23505', 'Run id 00000000-0000-0000-0000-0000000000ab is taken: %',
                 'the same run id cannot start twice');
select throws_ok($$select pgflow.start_run('nope', '{}')$$, 'P0002', 'Flow alias "nope" does not exist',
                 'an unknown alias is named');
select throws_ok($$select pgflow.start_run('sequential', null)$$, '22004',
                 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)',
                 'SQL NULL input');
select is((select count(*) from pgflow.runs), 1::bigint, 'the failed calls left no run');

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select pgflow.start_run('greetUser', '{}') as alias_run \gset
select is((select flow_slug from pgflow.runs where run_id = :'alias_run'), 'greetUserV1',
          'an alias starts its active version');
select throws_ok($$select pgflow.start_run('greetUserV2', '{}')$$, 'P0002',
                 'Flow alias "greetUserV2" does not exist; flow "greetUserV2" exists under alias "greetUser": start it by slug (start_flow_by_slug) or by that alias',
                 'a version is not an alias');

select * from finish();
rollback;
