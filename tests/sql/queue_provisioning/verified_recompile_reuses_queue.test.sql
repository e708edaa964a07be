-- A persisted definition verifies and reuses its generated queue idempotently, also in a later
-- transaction: same pgmq.meta row (created_at unchanged), messages kept, no second queue.
-- Ownership comes from the definition: a step routing to it, or (flow without steps) the queue
-- created together with the flow.
begin;
select plan(8);

select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $q$do $d$ begin
  perform pgflow.ensure_flow_compiled('kept', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                      pgflow.worker_protocol());
  perform pgflow.ensure_flow_compiled('keptEmpty', '{"steps": []}', pgflow.worker_protocol());
end $d$ $q$);
select dblink_exec('setup', $q$do $d$ begin perform pgflow.start_flow('kept', '{}'); end $d$ $q$);
select dblink_disconnect('setup');
create temp table meta_before as select * from pgmq.meta;

select is(pgflow.ensure_flow_compiled('kept', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                      pgflow.worker_protocol()),
          '{"status": "verified", "differences": [], "mismatchKind": null, "flow_control": {}, "queue_mode": "flow", "queue_name": "kept",
            "routes": [{"stepSlug": "a", "queueName": "kept"}],
            "flow_alias": "kept", "activation": "active", "active_flow_slug": "kept"}'::jsonb, 'the flow verifies');
select is(pgflow.ensure_flow_compiled('kept', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                      pgflow.worker_protocol())->>'status', 'verified', 'and again');
select is((pgflow_tests.queue_counts('kept')).active, 1::bigint, 'its queued message is kept');
select is(pgflow.ensure_flow_compiled('keptEmpty', '{"steps": []}', pgflow.worker_protocol())->>'status',
          'verified', 'the stepless flow verifies in a later transaction');
select set_eq($$select queue_name, created_at from pgmq.meta$$, $$select queue_name, created_at from meta_before$$,
              'pgmq.meta is unchanged (same rows, same created_at)');
select is((select count(*) from pgmq.meta), 2::bigint, '(one queue per flow)');
select lives_ok($$select pgflow.add_step('keptEmpty', 'later')$$, 'add_step on the stepless flow reuses its queue');
select is((select queue_name from pgflow.steps where flow_slug = 'keptEmpty'), 'keptempty', 'and routes the step to it');

select * from finish();
rollback;
