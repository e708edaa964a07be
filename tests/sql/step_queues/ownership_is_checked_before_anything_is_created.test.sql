-- Before a new step-queued definition creates anything, one preflight checks every generated
-- name: an existing PGMQ queue (never adopted), case-alias pgmq.meta rows, orphan queue tables,
-- and a name another flow routes to are all rejected, listed in one error; nothing is created.
begin;
select plan(6);

select pgmq.create('shop__pay');                     -- an existing queue with a generated name
select pgmq.create('shop__ship');                     -- and case aliases of another one
insert into pgmq.meta (queue_name, is_partitioned, is_unlogged, created_at)
  values ('Shop__Ship', false, false, now());
create table pgmq.q_shop__pack (msg_id bigint);       -- orphan tables without a meta row
select pgflow.ensure_flow_compiled('other', jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
update pgflow.steps set queue_name = 'shop__log' where flow_slug = 'other';  -- another flow routes there

select throws_ok($$select pgflow_tests.compile_step_flow('shop', jsonb_build_array(
                     pgflow_tests.step_shape('pay'), pgflow_tests.step_shape('ship', array['pay']),
                     pgflow_tests.step_shape('pack', array['pay']), pgflow_tests.step_shape('log', array['pay']),
                     pgflow_tests.step_shape('fine', array['pay'])))$$,
                 '42710',
                 e'Flow "shop" cannot get its step queues (nothing was created):\n'
                 '  - PGMQ queue "shop__pay" already exists; pgflow never adopts a queue it did not create\n'
                 '  - pgmq.meta has 2 rows for the tables of queue "shop__ship" (Shop__Ship, shop__ship): case aliases\n'
                 '  - PGMQ tables pgmq.q_shop__pack / pgmq.a_shop__pack exist without a pgmq.meta row\n'
                 '  - queue "shop__log" is already used by flow "other"\n'
                 'Drop or rename those queues, or deploy the flow under another slug',
                 'every problem is listed in one error');
select is((select count(*) from pgflow.flows where flow_slug = 'shop'), 0::bigint, 'the flow was not persisted');
select ok(not exists (select 1 from pgmq.meta where queue_name = 'shop__fine'),
          'not even the queue without a problem was created');
select is((select count(*) from pgmq.meta where lower(queue_name) like 'shop\_\_%'), 3::bigint,
          'the existing queues are untouched');

-- A queue created by someone else concurrently with the compilation is never adopted either:
-- pgmq.create() is idempotent, so _create_queue checks that this transaction created it.
select pgflow.create_flow('solo') is not null as created;
select pgmq.create('solo__only');
update pgmq.meta set created_at = now() - interval '1 minute' where queue_name = 'solo__only';
select throws_ok($$select pgflow._create_queue('solo__only')$$, '42710',
                 'PGMQ queue "solo__only" was created concurrently by someone else; refusing to adopt it',
                 'a queue that exists already is refused at creation too');
select is((select count(*) from pgmq.meta where queue_name = 'solo__only'), 1::bigint, '(it is left as it was)');

select * from finish();
rollback;
