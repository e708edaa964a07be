-- A generated queue whose PGMQ objects are incomplete is malformed: a pgmq.meta row without
-- its message or archive table, or tables without a meta row. Verifying the flow and add_step
-- refuse; nothing changes.
begin;
select plan(8);

select pgflow.ensure_flow_compiled('noq', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.ensure_flow_compiled('noa', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.ensure_flow_compiled('nometa', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow_tests.drop_queue_table('pgmq.q_noq');
select pgflow_tests.drop_queue_table('pgmq.a_noa');
delete from pgmq.meta where queue_name = 'nometa';

select throws_ok($$select pgflow.ensure_flow_compiled('noq', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())$$,
  '42P01', 'PGMQ queue "noq" is malformed: table pgmq.q_noq or pgmq.a_noq is missing',
  'meta row without its message table: verification refuses');
select throws_ok($$select pgflow.ensure_flow_compiled('noa', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())$$,
  '42P01', 'PGMQ queue "noa" is malformed: table pgmq.q_noa or pgmq.a_noa is missing', 'meta row without its archive table: verification refuses');
select throws_ok($$select pgflow.add_step('noa', 'b')$$, '42P01', 'PGMQ queue "noa" is malformed: table pgmq.q_noa or pgmq.a_noa is missing', 'add_step refuses too');
select throws_ok($$select pgflow.ensure_flow_compiled('nometa', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())$$,
  '42710', 'PGMQ tables pgmq.q_nometa / pgmq.a_nometa exist without a pgmq.meta row; refusing to reuse them',
  'tables without a meta row: verification refuses');
select throws_ok($$select pgflow.add_step('nometa', 'b')$$, '42710', 'PGMQ tables pgmq.q_nometa / pgmq.a_nometa exist without a pgmq.meta row; refusing to reuse them', 'add_step refuses too');
select is((select count(*) from pgflow.steps), 3::bigint, 'no step was added');
select hasnt_table('pgmq', 'q_noq', 'the missing table was not silently recreated');
select is((select count(*) from pgmq.meta where queue_name = 'nometa'), 0::bigint, 'no meta row was silently added');

select * from finish();
rollback;
