-- delete_flow_and_data refuses to drop an uncertain physical resource: an ambiguous queue (two
-- pgmq.meta rows for its tables), a malformed one (a table missing), a queue also referenced
-- by another flow's task snapshot, or a flow with a task snapshot off its route. Each failure
-- leaves every pgflow row, every pgmq.meta row and every PGMQ table as it was.
begin;
select plan(10);

create function pg_temp.state() returns jsonb language sql as $$
  select jsonb_build_object(
    'flows', (select jsonb_agg(to_jsonb(x) order by x.flow_slug) from pgflow.flows x),
    'steps', (select jsonb_agg(to_jsonb(x) order by x.flow_slug, x.step_slug) from pgflow.steps x),
    'deps', (select jsonb_agg(to_jsonb(x) order by x.flow_slug, x.step_slug, x.dep_slug) from pgflow.deps x),
    'runs', (select jsonb_agg(to_jsonb(x) order by x.run_id) from pgflow.runs x),
    'states', (select jsonb_agg(to_jsonb(x) order by x.run_id, x.step_slug) from pgflow.step_states x),
    'tasks', (select jsonb_agg(to_jsonb(x) order by x.run_id, x.step_slug) from pgflow.step_tasks x),
    'meta', (select jsonb_agg(to_jsonb(x) order by x.queue_name) from pgmq.meta x),
    'tables', (select jsonb_agg(tablename order by tablename) from pg_tables where schemaname = 'pgmq'))
$$;
create function pg_temp.compile(p_flow text) returns void language sql as $$
  select pgflow.ensure_flow_compiled(p_flow, jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
  select pgflow.start_flow(p_flow, '{}');
$$;

select pg_temp.compile('amb');
select pgmq.create('Amb');
select pg_temp.compile('mal');
select pgflow_tests.drop_queue_table('pgmq.a_mal');
select pg_temp.compile('shared');
select pg_temp.compile('borrower');
select pgflow.start_flow('borrower', '{}');
-- One of borrower's tasks says its message is in shared's queue.
update pgflow.step_tasks set queue_name = 'shared', message_id = 999
where run_id = (select max(run_id::text)::uuid from pgflow.runs where flow_slug = 'borrower');
select pg_temp.compile('stray');
update pgflow.step_tasks set queue_name = 'elsewhere' where flow_slug = 'stray';
create temp table before as select pg_temp.state() as s;

select throws_ok($$select pgflow.delete_flow_and_data('amb')$$, '21000',
  'PGMQ queue "amb" is ambiguous: pgmq.meta has 2 rows for the same tables (Amb, amb); keep one', 'ambiguous queue: refused');
select is(pg_temp.state(), (select s from before), 'ambiguous queue: nothing changed');
select throws_ok($$select pgflow.delete_flow_and_data('mal')$$, '42P01',
  'PGMQ queue "mal" is malformed: table pgmq.q_mal or pgmq.a_mal is missing', 'malformed queue: refused');
select is(pg_temp.state(), (select s from before), 'malformed queue: nothing changed');
select throws_ok($$select pgflow.delete_flow_and_data('shared')$$, '55006',
  'Queue "shared" of flow "shared" is also referenced by another flow; refusing to drop it',
  'a queue referenced by another flow''s task snapshot: refused');
select is(pg_temp.state(), (select s from before), 'referenced queue: nothing changed');
select throws_ok($$select pgflow.delete_flow_and_data('stray')$$, '55006',
  'Flow "stray" has tasks in queue "elsewhere", which is not on its route; refusing to delete',
  'a task snapshot off the flow''s route: refused');
select is(pg_temp.state(), (select s from before), 'off-route snapshot: nothing changed');
select throws_ok($$select pgflow.delete_flow_and_data('borrower')$$, '55006', 'Flow "borrower" has tasks in queue "shared", which is not on its route; refusing to delete',
  'the borrowing flow itself has a snapshot off its route: refused');
select is(pg_temp.state(), (select s from before), 'nothing changed');

select * from finish();
rollback;
