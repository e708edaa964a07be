-- cancel_run ends a started run at once: failed with cancelled_at and the reason, run:failed
-- with "cancelled: <reason>", every queued and started task cancelled with its message
-- archived, nothing downstream started; every step that had not ended fails with the same
-- message (schema 0014: a running step no longer stays `started` under a cancelled run), with a
-- step:failed event each, after run:failed. A completed step keeps its outcome.
begin;
select plan(9);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'slow');
select pgflow.add_step('f', 'waiting');
select pgflow.add_step('f', 'after', array['slow']);
select pgflow.add_step('f', 'done');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'slow') \g /dev/null
select pgflow_tests.start_task(:'run', 'done') \g /dev/null
select pgflow.complete_task(:'run', 'done', 0, '"ok"') \g /dev/null

select is(pgflow.cancel_run(:'run', 'the customer left'), true, 'returns true: this call cancelled the run');
select results_eq($$select status, failed_at is not null, cancelled_at = failed_at, cancel_reason, completed_at from pgflow.runs$$,
                  $$values ('failed', true, true, 'the customer left', null::timestamptz)$$,
                  'the run is failed, cancelled, with the reason');
select results_eq($$select step_slug, status from pgflow.step_tasks order by step_slug$$,
                  $$values ('done', 'completed'), ('slow', 'cancelled'), ('waiting', 'cancelled')$$,
                  'its started and its queued task are cancelled; nothing downstream was created');
select results_eq($$select step_slug, status, error_message, failed_at is not null from pgflow.step_states order by step_slug$$,
                  $$values ('after', 'failed', 'cancelled: the customer left', true),
                           ('done', 'completed', null, false),
                           ('slow', 'failed', 'cancelled: the customer left', true),
                           ('waiting', 'failed', 'cancelled: the customer left', true)$$,
                  'every step that had not ended failed with the cancellation; the completed one kept its outcome');
select is((select count(*)::int from pgflow.step_states where status in ('created', 'started')), 0,
          'no step of the cancelled run is left created or started');
select is((select (active, archived) from pgflow_tests.queue_counts('f'))::text, '(0,3)', 'every message is archived');
select results_eq($$select payload->>'status', payload->>'error_message' from pgflow_tests.realtime_events('$$ || :'run' || $$')
                    where event = 'run:failed'$$,
                  $$values ('failed', 'cancelled: the customer left')$$, 'run:failed names the cancellation');
select results_eq($$select e.event, e.payload->>'error_message'
                    from pgflow_tests.realtime_events('$$ || :'run' || $$') with ordinality e(event, payload, topic, n)
                    where e.event like 'step:%:failed' or e.event = 'run:failed' order by e.n$$,
                  $$values ('run:failed', 'cancelled: the customer left'),
                           ('step:after:failed', 'cancelled: the customer left'),
                           ('step:slow:failed', 'cancelled: the customer left'),
                           ('step:waiting:failed', 'cancelled: the customer left')$$,
                  'run:failed, then step:failed for each step it ended, in step order');
select is(pgflow.cancel_run(:'run'), false, 'cancelling again changes nothing and says so');

select * from finish();
rollback;
