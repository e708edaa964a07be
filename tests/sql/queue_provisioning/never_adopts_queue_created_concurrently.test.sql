-- A queue that appears after the compiler's preflight must not be silently adopted by the
-- idempotent pgmq.create: another session creates the generated queue (uncommitted) while the
-- compiler runs, so the compiler's pgmq.create waits on it; once it commits, the compilation
-- fails and leaves nothing behind, and the foreign queue stays as it is.
begin;
select plan(6);

select dblink_connect('foreign', pgflow_tests.dblink_connstr());
select dblink_connect('compiler', pgflow_tests.dblink_connstr());
select dblink_exec('foreign', 'begin');
select dblink_exec('foreign', $q$do $d$ begin perform pgmq.create('raced'); perform pgmq.send('raced', '{"theirs": true}'); end $d$ $q$);

select pid as compiler_pid from dblink('compiler', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('compiler', $$select pgflow.ensure_flow_compiled('raced',
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())::text$$);
select ok(pgflow_tests.wait_for_lock(:compiler_pid), 'the compiler passed its preflight and waits on the foreign queue');

select dblink_exec('foreign', 'commit');
select is_empty($$select * from dblink_get_result('compiler', false) as t(x text)$$, 'the compilation returns no result');
select ok(dblink_error_message('compiler') ~ '(pg_type_typname_nsp_index|pg_class_relname_nsp_index|created concurrently by someone else)',
          'the compilation failed on the concurrently created queue');
select * from dblink_get_result('compiler', false) as t(x text);

select is((select count(*) from pgflow.flows where flow_slug = 'raced'), 0::bigint, 'no flow was created');
select results_eq($$select queue_name::text from pgmq.meta where lower(queue_name) = 'raced'$$, $$values ('raced'::text)$$,
                  'the foreign queue has its one meta row');
select is((pgflow_tests.queue_counts('raced')).active, 1::bigint, 'and its message');

select dblink_disconnect('foreign');
select dblink_disconnect('compiler');
select * from finish();
rollback;
