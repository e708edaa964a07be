-- start_flow_by_alias is start_flow with the alias named as such: the active version at the
-- time of the call, resolved in the same call; the flow's own input checks apply.
begin;
select plan(4);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser', jsonb_build_array(pgflow_tests.step_shape('each', step_type => 'map')));

select is((select flow_slug from pgflow.start_flow_by_alias('greetUser', '{}')), 'greetUserV1', 'the active version');
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');
select throws_ok($$select pgflow.start_flow_by_alias('greetUser', '{}')$$, 'P0001',
                 'Flow greetUserV2 has root map steps but input is not an array (got object)',
                 'after a switch, the new version''s input rules apply');
select is((select flow_slug from pgflow.start_flow_by_alias('greetUser', '[1, 2]')), 'greetUserV2', 'and it starts');
select is((select flow_slug from pgflow.start_flow('greetUser', '[1]')), 'greetUserV2', 'as with start_flow');

select * from finish();
rollback;
