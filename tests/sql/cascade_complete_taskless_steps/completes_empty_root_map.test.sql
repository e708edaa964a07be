-- A root map over [] has no tasks: start_flow completes it at once (started_at = completed_at,
-- remaining_tasks 0, initial_tasks 0, output []), without tasks or messages, and the run completes.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');

select results_eq($$select status, remaining_steps, output from pgflow.start_flow('f', '[]')$$,
                  $$values ('completed', 0, '{"items": []}'::jsonb)$$, 'the run completes inside start_flow');
select results_eq($$select status, initial_tasks, remaining_tasks, output, (started_at = completed_at) from pgflow.step_states$$,
                  $$values ('completed', 0, 0, '[]'::jsonb, true)$$, 'the map completed with []');
select is((select count(*)::int from pgflow.step_tasks), 0, 'no tasks');
select is((select count(*)::int from pgmq.q_f) + (select count(*)::int from pgmq.a_f), 0, 'no messages');

select * from finish();
rollback;
