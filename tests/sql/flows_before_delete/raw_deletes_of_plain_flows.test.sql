-- Upstream's test helpers and some users' scripts clear pgflow's tables with raw DELETEs,
-- children first. Since 0014 that works for plain flows: a flow that is its own alias and that
-- alias's only version takes its alias row with it. The active version of a named alias (or of
-- one with other versions) is refused, naming delete_flow_and_data, and nothing is deleted.
begin;
select plan(6);
select pgflow_tests.setup_flow('sequential');
select pgflow.start_flow('sequential', '{}');
select pgflow_tests.deploy('greetV1', 'greet');
select pgflow_tests.deploy('selfish', 'selfish');
select pgflow_tests.deploy('selfishV2', 'selfish');

select lives_ok($$do $d$ begin
  delete from pgflow.step_tasks;
  delete from pgflow.step_states;
  delete from pgflow.runs;
  delete from pgflow.deps where flow_slug = 'sequential';
  delete from pgflow.steps where flow_slug = 'sequential';
  delete from pgflow.flows where flow_slug = 'sequential';
end $d$ $$,
  'upstream''s raw deletion order works for a plain flow');
select is((select count(*)::int from pgflow.flow_aliases where flow_alias = 'sequential'), 0,
          'its alias row went with it');

select throws_ok($$delete from pgflow.flows where flow_slug = 'greetV1'$$,
  '23503', 'Flow "greetV1" is the active version of alias "greet"; delete it with pgflow.delete_flow_and_data(''greetV1''), not DELETE FROM pgflow.flows',
  'the active version of a named alias is refused, naming delete_flow_and_data');
select throws_ok($$delete from pgflow.flows where flow_slug = 'selfish'$$,
  '23503', 'Flow "selfish" is the active version of alias "selfish"; delete it with pgflow.delete_flow_and_data(''selfish''), not DELETE FROM pgflow.flows',
  'so is a self-named alias''s active version while the alias has other versions');
select results_eq($$select flow_slug from pgflow.flows order by 1$$, $$values ('greetV1'), ('selfish'), ('selfishV2')$$,
                  'nothing was deleted by the refused statements');
select lives_ok($$do $d$ begin
  delete from pgflow.steps where flow_slug = 'selfishV2';
  delete from pgflow.flows where flow_slug = 'selfishV2';
end $d$ $$,
                'an inactive version goes as before');

select * from finish();
rollback;
