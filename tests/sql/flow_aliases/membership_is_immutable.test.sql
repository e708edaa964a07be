-- A concrete flow belongs to one alias for good: deploying it under another alias fails with
-- both names (also on a local database, where a shape change would recompile), and so does
-- creating it again under another alias; nothing changes. The foreign key of the active pointer
-- refuses a direct UPDATE that would move an active version (no trigger guards inactive ones:
-- supported operations are what reject reassignment).
begin;
select plan(9);
set local pgflow.local = 'on';

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');

select throws_ok($$select pgflow_tests.deploy('greetUserV1', 'welcome')$$, '55000',
  'Flow "greetUserV1" belongs to alias "greetUser"; this worker deploys it under alias "welcome" (alias membership is immutable: deploy a new flow slug under that alias)',
  'deploying a version under another alias fails');
select throws_ok($$select pgflow_tests.deploy('greetUserV1', 'welcome', jsonb_build_array(pgflow_tests.step_shape('other')))$$,
  '55000', 'Flow "greetUserV1" belongs to alias "greetUser"; this worker deploys it under alias "welcome" (alias membership is immutable: deploy a new flow slug under that alias)', 'also locally with another shape (no recompilation under another alias)');
select throws_ok($$select pgflow_tests.deploy('greetUserV1', null)$$, '55000',
  'Flow "greetUserV1" belongs to alias "greetUser"; this worker deploys it under alias "greetUserV1" (alias membership is immutable: deploy a new flow slug under that alias)',
  'a plain-flow worker (self-alias) of a version deployed under an alias fails');
select throws_ok($$select pgflow._create_flow('greetUserV2', flow_alias => 'welcome')$$, '55000',
  'Flow "greetUserV2" belongs to alias "greetUser"; it cannot move to alias "welcome" (alias membership is immutable: deploy a new flow slug under that alias)',
  'creating an existing flow under another alias fails');
select is((pgflow.create_flow('greetUserV2')).flow_alias, 'greetUser',
          'create_flow of an existing flow returns it with its alias (idempotent)');
select results_eq($$select flow_slug, flow_alias from pgflow.flows order by flow_slug$$,
                  $$values ('greetUserV1'::text, 'greetUser'::text), ('greetUserV2', 'greetUser')$$,
                  'memberships are unchanged');
select is(pgflow_tests.active_version('welcome'), null, 'and no alias "welcome" was created');
select throws_ok($$update pgflow.flows set flow_alias = 'welcome' where flow_slug = 'greetUserV1'$$, '23503', 'update or delete on table "flows" violates foreign key constraint "flow_aliases_flow_slug_flow_alias_fkey" on table "flow_aliases"',
                 'a direct UPDATE moving the active version breaks the pointer''s foreign key');
select throws_ok($$select pgflow_tests.deploy('greetUserV3', 'GreetUser')$$, '23505',
  'Flow alias "GreetUser" differs only in case from existing alias "greetUser"; aliases must be unique ignoring case',
  'an alias differing only in case from an existing one is refused');

select * from finish();
rollback;
