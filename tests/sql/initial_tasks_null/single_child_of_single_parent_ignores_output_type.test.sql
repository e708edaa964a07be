-- Only map children need an array: a single step feeding single steps may return any JSON
-- (or NULL), and a step with both a single and a map child must still return an array.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', array['a']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'a', 0, '"scalar"') \g /dev/null
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('a', 'completed'), ('b', 'started')$$, 'no type check for a single child');

select pgflow.create_flow('g');
select pgflow.add_step('g', 'a');
select pgflow.add_step('g', 'single_child', array['a']);
select pgflow.add_step('g', 'map_child', array['a'], step_type => 'map');
select run_id as run2 from pgflow.start_flow('g', '{}') \gset
select pgflow_tests.complete_step_task(:'run2', 'a', 0, '"scalar"') \g /dev/null
select is((select status from pgflow.runs where flow_slug = 'g'), 'failed', 'a map child anywhere makes it a violation');

select * from finish();
rollback;
