-- activate_flow_version switches an alias only while it still points to the expected version:
-- a stale expectation fails naming the actual version (55000) and changes nothing; the flow
-- must be a member of the alias. NULL expects an alias without an active version. Switching
-- back is a rollback with the same check.
begin;
select plan(14);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select pgflow_tests.deploy('greetUserV3', 'greetUser');
select pgflow_tests.deploy('welcomeV1', 'welcome');
select updated_at as before_switch from pgflow.flow_aliases where flow_alias = 'greetUser' \gset

select throws_ok($$select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV3')$$, '55000',
  'Alias "greetUser" points to "greetUserV1", but "greetUserV3" was expected; nothing changed (read the current version and decide again)',
  'a stale expected version is a conflict naming the actual one');
select throws_ok($$select pgflow.activate_flow_version('greetUser', 'greetUserV2', null)$$, '55000',
  'Alias "greetUser" points to "greetUserV1", but no active version was expected; nothing changed (read the current version and decide again)',
  'NULL expects an alias without an active version');
select results_eq($$select flow_slug, updated_at from pgflow.flow_aliases where flow_alias = 'greetUser'$$,
                  $$values ('greetUserV1'::text, '$$ || :'before_switch' || $$'::timestamptz)$$,
                  'conflicts change nothing');

select throws_ok($$select pgflow.activate_flow_version('greetUser', 'welcomeV1', 'greetUserV1')$$, '22023',
  'Flow "welcomeV1" is a version of alias "welcome", not of "greetUser"', 'a version of another alias is refused');
select throws_ok($$select pgflow.activate_flow_version('greetUser', 'greetUserV9', 'greetUserV1')$$, 'P0002',
  'Flow "greetUserV9" does not exist', 'an unknown flow is refused');
select throws_ok($$select pgflow.activate_flow_version(null, 'greetUserV2', 'greetUserV1')$$, '22004',
  'activate_flow_version(): flow_alias must not be NULL', 'a NULL alias is refused');
select throws_ok($$select pgflow.activate_flow_version('greetUser', null, 'greetUserV1')$$, '22004',
  'activate_flow_version(): flow_slug must not be NULL', 'so is a NULL flow');
select throws_ok($$select pgflow.activate_flow_version('nope', 'greetUserV2', 'greetUserV1')$$, '22023',
  'Flow "greetUserV2" is a version of alias "greetUser", not of "nope"', 'so is an unknown alias');

select is((select (flow_alias, flow_slug)::text from pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1')),
          '(greetUser,greetUserV2)', 'the expected current version: the alias switches and the row is returned');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV2', 'the alias points to V2');
select ok((select created_at < updated_at or updated_at = now() from pgflow.flow_aliases where flow_alias = 'greetUser'),
          'updated_at records the switch');
select is((select flow_slug from pgflow.start_flow('greetUser', '{}')), 'greetUserV2', 'new runs start V2');

select is((pgflow.activate_flow_version('greetUser', 'greetUserV1', 'greetUserV2')).flow_slug, 'greetUserV1',
          'rollback: activating V1 expecting V2');
select is((pgflow.activate_flow_version('greetUser', 'greetUserV1', 'greetUserV1')).flow_slug, 'greetUserV1',
          'activating the active version (expecting it) changes nothing else');

select * from finish();
rollback;
