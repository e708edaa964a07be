-- Sixty chained empty maps complete in one start_flow: the cascade runs until nothing changes
-- (upstream stopped with an error after 50 iterations).
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'm1', step_type => 'map');
select pgflow.add_step('f', 'm' || i, array['m' || (i - 1)], step_type => 'map') from generate_series(2, 60) i \g /dev/null

select results_eq($$select status, remaining_steps from pgflow.start_flow('f', '[]')$$, $$values ('completed', 0)$$,
                  'the run completes');
select is((select count(*)::int from pgflow.step_states where status = 'completed' and output = '[]'), 60,
          'all 60 maps completed with []');
select is(pgflow.cascade_complete_taskless_steps((select run_id from pgflow.runs)), 0,
          'a further call finds nothing to do');

select * from finish();
rollback;
