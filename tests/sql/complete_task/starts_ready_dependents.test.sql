-- When a step completes, dependents whose dependencies are all done start: status started, one
-- queued task with a message, and a claim gives them {dep_slug: output} as input. Dependents
-- still waiting for another dependency stay created.
begin;
select plan(6);
select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{"flow": true}') \gset

select pgflow_tests.complete_step_task(:'run', 'root_a', 0, '"A"') \g /dev/null
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'last'$$,
                  $$values ('created', 1)$$, 'last waits for root_b');
select is_empty($$select 1 from pgflow.step_tasks where step_slug = 'last'$$, 'no task for last yet');

select pgflow_tests.complete_step_task(:'run', 'root_b', 0, '"B"') \g /dev/null
select results_eq($$select status, remaining_deps, remaining_tasks from pgflow.step_states where step_slug = 'last'$$,
                  $$values ('started', 0, 1)$$, 'last started once both roots completed');
select results_eq($$select status, attempts_count from pgflow.step_tasks where step_slug = 'last'$$,
                  $$values ('queued', 0)$$, 'one queued task for last');
select is((select message->>'step_slug' from pgmq.q_two_roots), 'last', 'and its message is in the queue');
select results_eq($$select input, flow_input from pgflow_tests.start_task((select run_id from pgflow.runs), 'last')$$,
                  $$values ('{"root_a": "A", "root_b": "B"}'::jsonb, null::jsonb)$$,
                  'its input holds both outputs by dependency slug');

select * from finish();
rollback;
