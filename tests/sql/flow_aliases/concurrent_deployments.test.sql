-- Deployments race safely under the alias lock then the flow's definition lock: two workers of
-- one version (e.g. two step workers) compile it once, the second verifies; concurrent V2 and V3
-- deployments both compile and neither replaces the active V1 (no last-lock-holder-wins); two
-- first versions of a new alias: the first to commit activates it, the other stays inactive.
-- Each race holds session a's deployment open, so session b must wait for the alias lock.
begin;
select plan(9);

create temp table race_result as
select 'same version' as name, a_result::jsonb, b_result::jsonb, b_error from pgflow_tests.race(
  $$select pgflow_tests.deploy('greetUserV1', 'greetUser', null, 'step')::text$$,
  $$select pgflow_tests.deploy('greetUserV1', 'greetUser', null, 'step')::text$$);
select is((select (a_result->>'status', a_result->>'activation', b_result->>'status', b_result->>'activation', b_error)::text
           from race_result where name = 'same version'),
          '(compiled,activated,verified,active,)', 'one version, two workers: compiled once, then verified');
select is((select count(*) from pgflow.flows where flow_slug = 'greetUserV1'), 1::bigint, 'one flow row');
select is(array(select queue_name::text from pgmq.meta order by 1), array['greetuserv1__greet'], 'one step queue');

insert into race_result select 'v2 and v3', a_result::jsonb, b_result::jsonb, b_error from pgflow_tests.race(
  $$select pgflow_tests.deploy('greetUserV2', 'greetUser', null, 'step')::text$$,
  $$select pgflow_tests.deploy('greetUserV3', 'greetUser', null, 'step')::text$$);
select is((select (a_result->>'status', a_result->>'activation', b_result->>'status', b_result->>'activation', b_error)::text
           from race_result where name = 'v2 and v3'),
          '(compiled,inactive,compiled,inactive,)', 'V2 and V3 deploy at once: both compile, both inactive');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV1', 'V1 stays active');
select is(array(select flow_slug from pgflow.flows where flow_alias = 'greetUser' order by 1),
          array['greetUserV1', 'greetUserV2', 'greetUserV3'], 'all three are members');

insert into race_result select 'new alias', a_result::jsonb, b_result::jsonb, b_error from pgflow_tests.race(
  $$select pgflow_tests.deploy('freshV1', 'fresh')::text$$,
  $$select pgflow_tests.deploy('freshV2', 'fresh')::text$$);
select is((select (a_result->>'activation', b_result->>'activation', b_result->>'active_flow_slug', b_error)::text
           from race_result where name = 'new alias'),
          '(activated,inactive,freshV1,)', 'two first versions of a new alias: the first committed activates it');
select is(pgflow_tests.active_version('fresh'), 'freshV1', 'the later one did not replace it');

-- The alias lock is taken before the definition lock: while a session deploys a version, even
-- another version of the same alias waits (checked above), but a version of another alias does not.
select dblink_connect('c', pgflow_tests.dblink_connstr());
select dblink_exec('c', 'begin');
select * from dblink('c', $$select pgflow_tests.deploy('greetUserV4', 'greetUser')::text$$) as t(x text);
select is(pgflow_tests.deploy('otherV1', 'other')->>'status', 'compiled', 'another alias deploys meanwhile');
select dblink_exec('c', 'rollback');
select dblink_disconnect('c');

select * from finish();
rollback;
