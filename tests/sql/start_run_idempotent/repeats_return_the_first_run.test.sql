-- The first start with an idempotency key creates a run (created = true); every later start of
-- the same alias with the same key returns that run (created = false) and creates nothing, even
-- with another input, by slug, or after the alias's active version changed. Other keys, keys
-- differing in case and other aliases create their own runs.
begin;
select plan(14);

select pgflow_tests.setup_flow('sequential');
select run_id as first_run, created as first_created
from pgflow.start_run_idempotent('sequential', '{"n": 1}', 'order-1') \gset
select is(:'first_created'::boolean, true, 'the first start with a key creates the run');
select is((select (flow_slug, status, input)::text from pgflow.runs where run_id = :'first_run'),
          ('sequential', 'started', '{"n": 1}'::jsonb)::text, 'a started run of the flow, with the input');
select is((select count(*) from pgmq.q_sequential where message->>'run_id' = :'first_run'), 1::bigint,
          'its root step''s task is queued, as start_flow queues it');

select is((select row(run_id, created)::text from pgflow.start_run_idempotent('sequential', '{"n": 2}', 'order-1')),
          row(:'first_run'::uuid, false)::text, 'a repeat returns the first run, not created');
select is((select row(run_id, created)::text from pgflow.start_run_idempotent_by_slug('sequential', '{}', 'order-1')),
          row(:'first_run'::uuid, false)::text, 'so does a start by slug: keys belong to the alias');
select is((select count(*) from pgflow.runs), 1::bigint, 'no second run');
select is((select count(*) from pgmq.q_sequential), 1::bigint, 'and no second message');
select is((select input from pgflow.runs where run_id = :'first_run'), '{"n": 1}'::jsonb,
          'the run keeps the first input (a repeat''s input is not compared)');

select is((select created from pgflow.start_run_idempotent('sequential', '{}', 'order-2')), true,
          'another key creates another run');
select is((select created from pgflow.start_run_idempotent('sequential', '{}', 'ORDER-1')), true,
          'keys are compared exactly (case matters)');

-- Versions of one alias share its keys; another alias has its own.
select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select run_id as v1_run from pgflow.start_run_idempotent('greetUser', '{}', 'order-1') \gset
select is((select flow_slug from pgflow.runs where run_id = :'v1_run'), 'greetUserV1',
          'the same key under another alias creates that alias''s run');
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');
select is((select row(run_id, created)::text from pgflow.start_run_idempotent('greetUser', '{}', 'order-1')),
          row(:'v1_run'::uuid, false)::text, 'after activating V2 the key still returns the V1 run');
select is((select row(run_id, created)::text from pgflow.start_run_idempotent_by_slug('greetUserV2', '{}', 'order-1')),
          row(:'v1_run'::uuid, false)::text, 'also when V2 is started by slug');
select is((select count(*) from pgflow.run_idempotency_keys), 4::bigint, 'one key row per run created with a key');

select * from finish();
rollback;
