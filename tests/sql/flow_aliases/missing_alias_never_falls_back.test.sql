-- start_flow names an alias: a name that is no alias fails (P0002) even when a flow of that
-- slug exists, with a hint for near misses; start_flow_by_slug starts the concrete version.
begin;
select plan(6);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');

select throws_ok($$select pgflow.start_flow('greetUserV2', '{}')$$, 'P0002',
  'Flow alias "greetUserV2" does not exist; flow "greetUserV2" exists under alias "greetUser": start it by slug (start_flow_by_slug) or by that alias',
  'a concrete slug is not an alias');
select throws_ok($$select pgflow.start_flow('greetuser', '{}')$$, 'P0002',
  'Flow alias "greetuser" does not exist; alias "greetUser" differs only in case',
  'aliases are exact: a case variant fails, with a hint');
select throws_ok($$select pgflow.start_flow_with_states('nope', '{}')$$, 'P0002', 'Flow alias "nope" does not exist',
                 'start_flow_with_states fails alike');
select throws_ok($$select pgflow.start_flow_by_alias('nope', '{}')$$, 'P0002', 'Flow alias "nope" does not exist',
                 'and start_flow_by_alias');
select is((select count(*) from pgflow.runs), 0::bigint, 'no run was started');
select is((select flow_slug from pgflow.start_flow_by_slug('greetUserV2', '{}')), 'greetUserV2',
          'start_flow_by_slug pins the concrete version');

select * from finish();
rollback;
