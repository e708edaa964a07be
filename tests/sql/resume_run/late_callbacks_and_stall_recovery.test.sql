-- After resume_run, results of the earlier attempts change nothing while their task is queued;
-- once the task is claimed again, the first result wins (as after stall recovery); stall
-- recovery treats a resumed task like any other: requeued when its new claim stalls.
begin;
select plan(5);
select pgflow.create_flow('f', timeout => 1, max_attempts => 2);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a', 0, '11111111-1111-1111-1111-111111111111') \g /dev/null
select pgflow_tests.start_task(:'run', 'b', 0, '11111111-1111-1111-1111-111111111111') \g /dev/null
select pgflow.cancel_run(:'run') \g /dev/null
select pgflow.resume_run(:'run') \g /dev/null

select results_eq(format($$select status, output from pgflow.complete_task(%L, 'a', 0, '"old attempt"')$$, :'run'),
                  $$values ('queued', null::jsonb)$$, 'a late completion of the old attempt leaves the queued task alone');
select results_eq(format($$select status, attempts_count, error_message from pgflow.fail_task(%L, 'b', 0, 'old attempt')$$, :'run'),
                  $$values ('queued', 0, null::text)$$, 'so does a late failure');

select pgflow_tests.start_task(:'run', 'a', 0, '22222222-2222-2222-2222-222222222222') \g /dev/null
select pgflow.complete_task(:'run', 'a', 0, '"first result"') \g /dev/null
select is((select output from pgflow.step_tasks where step_slug = 'a'), '"first result"'::jsonb,
          'once claimed again, the first result completes the task');

select pgflow_tests.start_task(:'run', 'b', 0, '22222222-2222-2222-2222-222222222222') \g /dev/null
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute'
where step_slug = 'b';
select is(pgflow.requeue_stalled_tasks(), 1, 'stall recovery requeues the resumed task whose new claim stalled');
select results_eq($$select status, requeued_count, attempts_count from pgflow.step_tasks where step_slug = 'b'$$,
                  $$values ('queued', 1, 1)$$, 'with its fresh attempt count');

select * from finish();
rollback;
