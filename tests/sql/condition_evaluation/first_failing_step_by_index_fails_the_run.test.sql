-- Several ready steps with unmet `fail` conditions: the first in step order fails and the run
-- with it; the others stay created (the run is over).
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'z_first', required_input_pattern => '{"ok": true}', when_unmet => 'fail');
select pgflow.add_step('f', 'a_second', required_input_pattern => '{"ok": true}', when_unmet => 'fail');
select pgflow.start_flow('f', '{}') \g /dev/null

select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('a_second', 'created'), ('z_first', 'failed')$$, 'the lower step_index fails');
select is((select status from pgflow.runs), 'failed', 'the run failed');

select * from finish();
rollback;
