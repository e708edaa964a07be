-- Sixty chained steps each skipped by its condition (a skipped dependency makes the next
-- condition fail) are resolved in one start_flow: resolution repeats until nothing changes
-- (upstream stopped with an error after 50 iterations).
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 's1', required_input_pattern => '{"go": true}');
select pgflow.add_step('f', 's' || i, array['s' || (i - 1)],
                       required_input_pattern => jsonb_build_object('s' || (i - 1), '{}'::jsonb))
from generate_series(2, 60) i \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.start_flow('f', '{}')$$,
                  $$values ('completed', 0, null::jsonb)$$, 'the run completes inside start_flow');
select is((select count(*)::int from pgflow.step_states where status = 'skipped' and skip_reason = 'condition_unmet'), 60,
          'all 60 skipped for their own condition');
select is((select count(*)::int from pgflow.step_tasks), 0, 'no task was created');

select * from finish();
rollback;
