-- complete_task for an unknown run or task returns no row and changes nothing.
begin;
select plan(3);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is_empty($$select * from pgflow.complete_task(gen_random_uuid(), 'first', 0, '{}')$$, 'unknown run: no row');
select is_empty($$select * from pgflow.complete_task((select run_id from pgflow.runs), 'first', 5, '{}')$$,
                'unknown task index: no row');
select results_eq($$select status, remaining_tasks from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('started', 1)$$, 'nothing changed');

select * from finish();
rollback;
