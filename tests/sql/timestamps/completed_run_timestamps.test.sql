-- Along a successful run: runs started_at/completed_at, step created/started/completed, task
-- queued/started/completed are set, and failed_at / skipped_at are not.
begin;
select plan(4);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow_tests.poll_and_complete('sequential');
select pgflow_tests.poll_and_complete('sequential');
select pgflow_tests.poll_and_complete('sequential');

select results_eq($$select status, started_at = now(), completed_at = now(), failed_at from pgflow.runs$$,
                  $$values ('completed'::text, true, true, null::timestamptz)$$, 'run: started_at and completed_at');
select ok((select bool_and(created_at = now() and started_at = now() and completed_at = now()
                           and failed_at is null and skipped_at is null) from pgflow.step_states),
          'steps: created_at, started_at, completed_at; no failed_at or skipped_at');
select ok((select bool_and(queued_at = now() and started_at = now() and completed_at = now() and failed_at is null)
           from pgflow.step_tasks),
          'tasks: queued_at, started_at, completed_at; no failed_at');
select is((select count(*) from pgflow.step_tasks), 3::bigint, '(three tasks)');

select * from finish();
rollback;
