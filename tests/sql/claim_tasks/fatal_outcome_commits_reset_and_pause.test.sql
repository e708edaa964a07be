-- The fatal outcome is returned, not raised, so a worker's autocommit call commits the
-- visibility reset and the pause (a raised error would roll them back). Checked from another
-- session after the worker's call.
begin;
select plan(5);

select dblink_connect('worker', pgflow_tests.dblink_connstr());
select dblink_exec('worker', $q$do $d$ begin
  perform pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
  perform pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
  perform pgflow.start_flow('f', '{}');
  perform pgmq.send('f', '{"flow_slug": "f", "run_id": "00000000-0000-0000-0000-000000000000", "step_slug": "a", "task_index": 0}');
end $d$ $q$);

select results_eq($$select * from dblink('worker', 'select outcome from pgflow.claim_tasks(''f'', ''f'',
                      array(select msg_id from pgmq.read(''f'', 30, 10)), ''11111111-1111-1111-1111-111111111111'') order by msg_id')
                    as t(outcome text)$$,
                  $$values ('reset'::text), ('fatal')$$, 'the worker''s call returns the outcomes');
select is(dblink_error_message('worker'), 'OK', 'without an error');
select dblink_disconnect('worker');

select ok((select paused_at is not null from pgflow.worker_functions where function_name = 'fn'),
          'the pause is committed');
select ok((select bool_and(vt <= clock_timestamp()) from pgmq.q_f), 'the visibility reset is committed');
select results_eq($$select status, attempts_count from pgflow.step_tasks$$, $$values ('queued'::text, 0)$$,
                  'and nothing else was');

select * from finish();
rollback;
