-- When the last step completes, the run completes: status completed, completed_at set,
-- remaining_steps 0, and output = {leaf_slug: output} of every leaf step (non-leaves excluded).
begin;
select plan(5);
select pgflow_tests.setup_flow('two_roots_left_right');
select run_id as run from pgflow.start_flow('two_roots_left_right', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'connected_root', 0, '"root"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'left', 0, '{"side": "left"}') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'right', 0, '[1, 2]') \g /dev/null
select is((select status from pgflow.runs), 'started', 'still started while disconnected_root runs');

select pgflow_tests.complete_step_task(:'run', 'disconnected_root', 0, '7') \g /dev/null
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('completed', 0)$$,
                  'the run is completed with no remaining steps');
select ok((select completed_at is not null and failed_at is null from pgflow.runs), 'completed_at is set');
select is((select output from pgflow.runs),
          '{"left": {"side": "left"}, "right": [1, 2], "disconnected_root": 7}'::jsonb,
          'output maps each leaf to its output; connected_root is not a leaf');
select is((select count(*)::int from pgmq.q_two_roots_left_right), 0, 'no message is left in the queue');

select * from finish();
rollback;
