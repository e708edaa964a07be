-- complete_tasks locks the runs of a batch in run_id order, whatever the batch order, so two
-- reporters never hold locks in opposite orders: while session a holds the lower run (its own
-- batch still open), session b's batch [higher, lower] waits for the lower run without having
-- locked the higher one (a third session can lock it at once); when a commits, b completes.
-- Commits for real (this file runs in its own database).
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.start_flow('f', '{}');
select pgflow.start_flow('f', '{}');
select count(*) from pgflow_tests.read_and_start('f', 30, 10);
select run_id as low from pgflow.runs order by run_id limit 1 \gset
select run_id as high from pgflow.runs order by run_id desc limit 1 \gset

begin;
select plan(5);
select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select dblink_connect('c', pgflow_tests.dblink_connstr());
select dblink_exec('a', 'begin');
select status from dblink('a', format($$select status from pgflow.complete_tasks('[{"run_id": "%s", "step_slug": "a", "task_index": 0, "output": "a"}]')$$, :'low')) as t(status text);
select dblink_exec('b', 'begin');
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('b', format($$select status from pgflow.complete_tasks('[{"run_id": "%s", "step_slug": "a", "task_index": 0, "output": "b"}, {"run_id": "%s", "step_slug": "a", "task_index": 0, "output": "b"}]')$$, :'high', :'low'));

select ok(pgflow_tests.wait_for_lock(:b_pid), 'session b waits for the lower run, held by session a');
select is((select id from dblink('c', format($$select run_id from pgflow.runs where run_id = '%s' for update nowait$$, :'high')) as t(id uuid)),
          :'high'::uuid, 'the higher run is not locked: b did not take it before the lower one');
select dblink_exec('a', 'commit');
select results_eq($$select status from dblink_get_result('b') as t(status text) order by 1$$,
                  $$values ('completed'), ('completed')$$,
                  'when a commits, b goes on: its result for the higher run completes, the lower one was already completed');
select * from dblink_get_result('b') as t(status text);  -- (the end of b's results)
select dblink_exec('b', 'commit');
select results_eq(format($$select output from pgflow.step_tasks where run_id = '%s'$$, :'low'), $$values ('"a"'::jsonb)$$,
                  'the lower run kept session a''s output');
select is((select count(*) from pgflow.runs where status = 'completed'), 2::bigint, 'both runs completed');
select dblink_disconnect('a');
select dblink_disconnect('b');
select dblink_disconnect('c');

select * from finish();
rollback;
