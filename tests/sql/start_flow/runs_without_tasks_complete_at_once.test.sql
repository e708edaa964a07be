-- Runs that need no task complete inside start_flow: a flow without steps, and a root map over
-- an empty array (with a dependent map following it).
begin;
select plan(5);

select pgflow.create_flow('empty');
select results_eq($$select status, remaining_steps, output, completed_at = now() from pgflow.start_flow('empty', '{}')$$,
                  $$values ('completed'::text, 0, null::jsonb, true)$$,
                  'a flow without steps completes with output NULL');

select pgflow.create_flow('m');
select pgflow.add_step('m', 'items', step_type => 'map');
select pgflow.add_step('m', 'each', array['items'], step_type => 'map');
select run_id as run from pgflow.start_flow('m', '[]') \gset
select results_eq($$select status, remaining_steps, output from pgflow.runs where run_id = '$$ || :'run' || $$'$$,
                  $$values ('completed'::text, 0, '{"each": []}'::jsonb)$$,
                  'an empty root map chain completes the run; the leaf map output is []');
select results_eq($$select step_slug, status, initial_tasks, remaining_tasks, output from pgflow.step_states
                    where run_id = '$$ || :'run' || $$' order by step_slug$$,
                  $$values ('each'::text, 'completed'::text, 0, 0, '[]'::jsonb), ('items', 'completed', 0, 0, '[]')$$,
                  'both maps completed with output []');
select is((select count(*) from pgflow.step_tasks), 0::bigint, 'no tasks');
select is((pgflow_tests.queue_counts('m')).active, 0::bigint, 'no messages');

select * from finish();
rollback;
