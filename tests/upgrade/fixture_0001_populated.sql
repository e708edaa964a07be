-- Upgrade fixture: a populated database at schema version 0001 (upstream 0.16.0 semantics),
-- built only through 0001's own SQL API, as a 0.16.0 installation would have it. Loaded by
-- tests/integration/upgrade_test.cc right after `pgflow::migrate(url, {.target_version = 1})`;
-- the rejection tests add one problem each on top (fixture_problem_*.sql).
--
--   greet      hello -> bye. Run a1 completed (the message of its task "hello" was archived
--              and then its message_id set NULL); run a2 in flight with "hello" queued but
--              without a message (archived, message_id NULL).
--   fanout     root map "each" -> "total". Run b1 in flight: each[0] started, each[1] and
--              each[2] queued.
--   fragile    roots "boom" and "sibling", max_attempts 1. Run c1 failed: boom failed, sibling
--              cancelled (its message archived).
--   orderFlow  camelCase: validate -> charge; its pgmq.meta row is spelled "orderFlow" (tables
--              pgmq.q_orderflow / pgmq.a_orderflow). Run d1 completed, run d2 in flight with
--              "validate" queued.
--   workers    one 0.16.0 worker row per queue (queue_name as the 0.16.0 worker sent it).
-- Plain SQL (no psql meta-commands): the test runs it with Connection::exec_script, as one
-- transaction.

select pgflow.create_flow('greet', timeout => 30);
select pgflow.add_step('greet', 'hello');
select pgflow.add_step('greet', 'bye', array['hello']);

select pgflow.create_flow('fanout', timeout => 30);
select pgflow.add_step('fanout', 'each', step_type => 'map');
select pgflow.add_step('fanout', 'total', array['each']);

select pgflow.create_flow('fragile', max_attempts => 1, timeout => 30);
select pgflow.add_step('fragile', 'boom');
select pgflow.add_step('fragile', 'sibling');

select pgflow.create_flow('orderFlow', timeout => 30);
select pgflow.add_step('orderFlow', 'validate');
select pgflow.add_step('orderFlow', 'charge', array['validate']);

insert into pgflow.workers (worker_id, queue_name, function_name) values
  ('11111111-1111-1111-1111-111111111111', 'greet', 'greet_worker'),
  ('22222222-2222-2222-2222-222222222222', 'fanout', 'fanout_worker'),
  ('33333333-3333-3333-3333-333333333333', 'fragile', 'fragile_worker'),
  ('44444444-4444-4444-4444-444444444444', 'orderFlow', 'order_worker');
insert into pgflow.worker_functions (function_name) values
  ('greet_worker'), ('fanout_worker'), ('fragile_worker'), ('order_worker');

-- greet a1: completed; then its "hello" task loses its (archived) message id.
select pgflow.start_flow('greet', '{"name": "Ada"}', '00000000-0000-0000-0000-0000000000a1');
select count(*) from pgflow.start_tasks('greet',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000a1' and step_slug = 'hello'),
  '11111111-1111-1111-1111-111111111111');
select count(*) from pgflow.complete_task('00000000-0000-0000-0000-0000000000a1', 'hello', 0,
                                          '"hi Ada"');
select count(*) from pgflow.start_tasks('greet',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000a1' and step_slug = 'bye'),
  '11111111-1111-1111-1111-111111111111');
select count(*) from pgflow.complete_task('00000000-0000-0000-0000-0000000000a1', 'bye', 0,
                                          '"bye Ada"');
update pgflow.step_tasks set message_id = null
where run_id = '00000000-0000-0000-0000-0000000000a1' and step_slug = 'hello';

-- greet a2: in flight; "hello" is queued but its message was archived and the id cleared.
select pgflow.start_flow('greet', '{"name": "Bob"}', '00000000-0000-0000-0000-0000000000a2');
select pgmq.archive('greet', (select message_id from pgflow.step_tasks
                              where run_id = '00000000-0000-0000-0000-0000000000a2'));
update pgflow.step_tasks set message_id = null
where run_id = '00000000-0000-0000-0000-0000000000a2';

-- fanout b1: in flight, one map task started, two queued.
select pgflow.start_flow('fanout', '[10, 20, 30]', '00000000-0000-0000-0000-0000000000b1');
select count(*) from pgflow.start_tasks('fanout',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000b1' and task_index = 0),
  '22222222-2222-2222-2222-222222222222');

-- fragile c1: boom fails (1 attempt), the run fails and sibling is cancelled.
select pgflow.start_flow('fragile', '{}', '00000000-0000-0000-0000-0000000000c1');
select count(*) from pgflow.start_tasks('fragile',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000c1' and step_slug = 'boom'),
  '33333333-3333-3333-3333-333333333333');
select count(*) from pgflow.fail_task('00000000-0000-0000-0000-0000000000c1', 'boom', 0, 'kaboom');

-- orderFlow d1 completed, d2 in flight.
select pgflow.start_flow('orderFlow', '{"order": 1}', '00000000-0000-0000-0000-0000000000d1');
select count(*) from pgflow.start_tasks('orderFlow',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000d1' and step_slug = 'validate'),
  '44444444-4444-4444-4444-444444444444');
select count(*) from pgflow.complete_task('00000000-0000-0000-0000-0000000000d1', 'validate', 0,
                                          '{"ok": true}');
select count(*) from pgflow.start_tasks('orderFlow',
  array(select message_id from pgflow.step_tasks
        where run_id = '00000000-0000-0000-0000-0000000000d1' and step_slug = 'charge'),
  '44444444-4444-4444-4444-444444444444');
select count(*) from pgflow.complete_task('00000000-0000-0000-0000-0000000000d1', 'charge', 0,
                                          '{"charged": 1}');
select pgflow.start_flow('orderFlow', '{"order": 2}', '00000000-0000-0000-0000-0000000000d2');

-- The fixture is what it says.
do $$
begin
  assert (select status from pgflow.runs where run_id = '00000000-0000-0000-0000-0000000000a1') = 'completed';
  assert (select status from pgflow.runs where run_id = '00000000-0000-0000-0000-0000000000c1') = 'failed';
  assert (select status from pgflow.step_tasks
          where run_id = '00000000-0000-0000-0000-0000000000c1' and step_slug = 'sibling') = 'cancelled';
  assert (select array_agg(status order by task_index) from pgflow.step_tasks
          where run_id = '00000000-0000-0000-0000-0000000000b1') = array['started', 'queued', 'queued'];
  assert (select status from pgflow.runs where run_id = '00000000-0000-0000-0000-0000000000d1') = 'completed';
  assert (select count(*) from pgflow.step_tasks where message_id is null) = 2;
  assert (select array_agg(queue_name::text order by queue_name) from pgmq.meta)
         = array['fanout', 'fragile', 'greet', 'orderFlow'];
  assert to_regclass('pgmq.q_orderflow') is not null and to_regclass('pgmq.a_orderflow') is not null;
  assert (select count(*) from pgmq.q_orderflow) = 1 and (select count(*) from pgmq.a_orderflow) = 2;
end;
$$;
