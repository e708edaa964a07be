-- Deletion stays concrete-slug based, with the alias rules: an inactive version can be deleted
-- (the alias and its active version are untouched); the active version of an alias with other
-- versions cannot (nothing changes); the sole version of an alias goes together with the alias
-- - asked for explicitly for a named alias, by default for a plain flow's self-alias.
begin;
select plan(11);

select pgflow_tests.deploy('greetUserV1', 'greetUser', null, 'step');
select pgflow_tests.deploy('greetUserV2', 'greetUser', null, 'step');
select pgflow_tests.deploy('greetUserV3', 'greetUser', null, 'step');
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');
select run_id as run from pgflow.start_flow('greetUser', '{}') \gset

select lives_ok($$select pgflow.delete_flow_and_data('greetUserV1')$$, 'an inactive version is deleted');
select is(array(select queue_name::text from pgmq.meta order by 1), array['greetuserv2__greet', 'greetuserv3__greet'],
          'with its private queues only');

select throws_ok($$select pgflow.delete_flow_and_data('greetUserV2')$$, '55006',
  'Flow "greetUserV2" is the active version of alias "greetUser", which has other versions (greetUserV3); activate one of them first (pgflow.activate_flow_version), then delete this one',
  'the active version of an alias with other versions is not deleted');
select is((select count(*) from pgflow.runs where run_id = :'run'), 1::bigint, 'its runs are kept');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV2', 'and the alias still points to it');

select pgflow.activate_flow_version('greetUser', 'greetUserV3', 'greetUserV2');
select pgflow.delete_flow_and_data('greetUserV2');
select throws_ok($$select pgflow.delete_flow_and_data('greetUserV3')$$, '55006',
  'Flow "greetUserV3" is the only version of alias "greetUser"; deleting it removes the alias, which callers start: pass p_remove_alias => true to do that',
  'the sole version of a named alias is not deleted by default');
select lives_ok($$select pgflow.delete_flow_and_data('greetUserV3', p_remove_alias => true)$$,
                'it is deleted when asked to remove the alias');
select is((select count(*) from pgflow.flow_aliases), 0::bigint, 'together with the alias');
select is((select count(*) from pgflow.flows) + (select count(*) from pgmq.meta), 0::bigint, 'nothing is left');

select pgflow_tests.deploy('plainFlow', null);
select lives_ok($$select pgflow.delete_flow_and_data('plainFlow')$$,
                'a plain flow (the sole version of its self-alias) is deleted by default');
select is((select count(*) from pgflow.flow_aliases) + (select count(*) from pgflow.flows), 0::bigint, 'with its alias');

select * from finish();
rollback;
