-- The transaction record of concurrency limits (pgflow.gated_flows, pgflow.gated_keys) is a
-- setting any role may set for its own transaction. Since 0027 the admission at commit
-- activates only key values that have a held queued task: a worker login that plants 50 fake
-- (flow, step, key) values before completing a task gets none of them into
-- pgflow.concurrency_keys (a table it cannot write), while the real held value is admitted
-- as before. A spoofed flow only makes the commit admit that flow, as any commit of its
-- tasks would. (SET CONSTRAINTS ALL IMMEDIATE: the admission runs at the end of the
-- statement that completes the task, reading the record the commit would read.)
begin;
select plan(5);
set constraints all immediate;

\i ../../../sql/contrib/grants.sql
\i ../grants/_worker_statements.sql
create role spoof_worker_login nologin in role pgflow_worker;

select pgflow.ensure_flow_compiled('spoof', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('work'))),
         pgflow.worker_protocol(), 'flow', null, null,
         '{"steps": {"work": {"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"]}}}}')->>'status';
select pgflow.ensure_flow_compiled('other', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('work'))),
         pgflow.worker_protocol(), 'flow', null, null,
         '{"steps": {"work": {"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"]}}}}')->>'status';
select pgflow.register_worker('b0000000-0000-0000-0000-000000000001', 'spoof-worker', 'spoof', 'spoof', pgflow.worker_protocol());
select count(*) from (select pgflow.start_run('spoof', '{"tenant": "a"}') from generate_series(1, 2)) s;
select is((select string_agg(gate, ',' order by queued_at) from pgflow.step_tasks where flow_slug = 'spoof'),
          'admitted,held', 'tenant a: one task admitted, one held');

set session authorization spoof_worker_login;
select count(*) from pg_temp.read_and_claim('spoof', 'spoof', 'b0000000-0000-0000-0000-000000000001');
-- The plant: 50 values of this flow and 50 of another, in this transaction's record.
select set_config('pgflow.gated_keys', pg_current_xact_id()::text || ':' ||
                  (select jsonb_agg(jsonb_build_array(f, 'work', 'fake-' || n))
                   from unnest(array['spoof', 'other']) f, generate_series(1, 50) n)::text, true) is not null;
select set_config('pgflow.gated_flows', pg_current_xact_id()::text || ':{other}', true) is not null;
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(jsonb_build_object(
                      'run_id', (select run_id from pgflow.runs r where r.flow_slug = 'spoof'
                                 order by (select t.gate from pgflow.step_tasks t where t.run_id = r.run_id) limit 1),
                      'step_slug', 'work', 'task_index', 0, 'output', 1)))$$,
                  $$values ('work', 'completed')$$, 'the worker completes the admitted task');
reset session authorization;

select is((select count(*) from pgflow.concurrency_keys where key like 'fake-%'), 0::bigint,
          'none of the 100 planted values was activated');
select is((select string_agg(key, ',' order by key) from pgflow.concurrency_keys where flow_slug = 'spoof'),
          'a', 'the flow''s one real value is all it has');
select is((select string_agg(gate || ':' || status, ',' order by queued_at) from pgflow.step_tasks where flow_slug = 'spoof'),
          'admitted:completed,admitted:queued', 'and the real held task took the freed slot, as before');

select * from finish();
rollback;
