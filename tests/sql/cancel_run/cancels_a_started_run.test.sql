-- cancel_run ends a started run at once: failed with cancelled_at and the reason, run:failed
-- with "cancelled: <reason>", every queued and started task cancelled with its message
-- archived, nothing downstream started; step states stay as they were.
begin;
select plan(7);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'slow');
select pgflow.add_step('f', 'waiting');
select pgflow.add_step('f', 'after', array['slow']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'slow') \g /dev/null

select is(pgflow.cancel_run(:'run', 'the customer left'), true, 'returns true: this call cancelled the run');
select results_eq($$select status, failed_at is not null, cancelled_at = failed_at, cancel_reason, completed_at from pgflow.runs$$,
                  $$values ('failed', true, true, 'the customer left', null::timestamptz)$$,
                  'the run is failed, cancelled, with the reason');
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('slow', 'cancelled'), ('waiting', 'cancelled')$$,
                  'its started and its queued task are cancelled; nothing downstream was created');
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'created'), ('slow', 'started'), ('waiting', 'started')$$,
                  'step states stay as they were');
select is((select (active, archived) from pgflow_tests.queue_counts('f'))::text, '(0,2)', 'both messages are archived');
select results_eq($$select payload->>'status', payload->>'error_message' from pgflow_tests.realtime_events('$$ || :'run' || $$')
                    where event = 'run:failed'$$,
                  $$values ('failed', 'cancelled: the customer left')$$, 'run:failed names the cancellation');
select is(pgflow.cancel_run(:'run'), false, 'cancelling again changes nothing and says so');

select * from finish();
rollback;
