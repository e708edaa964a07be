-- A root step with when_unmet = fail and an unmet condition fails the run inside start_flow:
-- start_flow returns the failed run and no step is started.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'strict', required_input_pattern => '{"ok": true}', when_unmet => 'fail');
select pgflow.add_step('f', 'other');

select results_eq($$select status from pgflow.start_flow('f', '{"ok": false}')$$, $$values ('failed')$$,
                  'start_flow returns the failed run');
select results_eq($$select step_slug, status, error_message from pgflow.step_states order by step_slug$$,
                  $$values ('other', 'created', null), ('strict', 'failed', 'Condition not met')$$,
                  'strict failed, other never started');
select is((select count(*)::int from pgflow.step_tasks), 0, 'no tasks');

select * from finish();
rollback;
