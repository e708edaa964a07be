-- The violating step fails with '[TYPE_VIOLATION] Map step <map> expects array input but
-- dependency <step> produced <type>' and failed_at; it has no output.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'list', 0, '42') \g /dev/null

select results_eq($$select status, error_message, (failed_at is not null), output, remaining_tasks from pgflow.step_states where step_slug = 'list'$$,
                  $$values ('failed', '[TYPE_VIOLATION] Map step each expects array input but dependency list produced number', true, null::jsonb, 1)$$,
                  'the step error');

select * from finish();
rollback;
