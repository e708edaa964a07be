-- The complete compiler provisions the generated queue even for a plain flow without steps
-- (backward compatibility), and verifying that flow later reuses it.
begin;
select plan(5);

select is(pgflow.ensure_flow_compiled('emptyFlow', '{"steps": []}', pgflow.worker_protocol()),
          '{"status": "compiled", "differences": [], "mismatchKind": null, "flow_control": {}, "queue_mode": "flow",
            "queue_name": "emptyflow", "routes": [],
            "flow_alias": "emptyFlow", "activation": "activated", "active_flow_slug": "emptyFlow"}'::jsonb,
          'an empty flow compiles');
select is((select count(*) from pgflow.steps), 0::bigint, 'it has no steps');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('emptyflow'::text)$$,
                  'its queue lower(flow_slug) was provisioned');
select is(pgflow.ensure_flow_compiled('emptyFlow', '{"steps": []}', pgflow.worker_protocol())->>'status',
          'verified', 'compiling it again verifies');
select is((select count(*) from pgmq.meta), 1::bigint, 'and keeps the one queue');

select * from finish();
rollback;
