-- start_ready_steps sets the step's started_at and the tasks' queued_at; the tasks are not started yet.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select results_eq($$select started_at = now(), created_at <= started_at from pgflow.step_states where step_slug = 'first'$$,
                  $$values (true, true)$$, 'step started_at is the transaction time');
select results_eq($$select queued_at = now(), started_at, completed_at, failed_at from pgflow.step_tasks$$,
                  $$values (true, null::timestamptz, null::timestamptz, null::timestamptz)$$,
                  'task queued_at is set; started_at, completed_at, failed_at are not');
select is((select started_at from pgflow.step_states where step_slug = 'second'), null::timestamptz,
          'a waiting step has no started_at');

select * from finish();
rollback;
