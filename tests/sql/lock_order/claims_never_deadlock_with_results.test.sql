-- One lock order (sql/schema/README.md): a claim holds the messages it read (pgmq.read) while
-- it waits for their runs; nobody holding a run waits for a message. The interleaving that
-- deadlocked before schema 0014 is forced here, step by step: a handler overran its timeout, so
-- its task's message is visible again and a worker's read holds it; the task's result arrives
-- (complete_task; fail_task with attempts left; stall recovery) and locks the run; then the
-- reader's claim asks for that run. Now the result never waits for the held message: it
-- commits at once, and the claim, which waited for the run, archives the completed task's
-- message or claims the task queued again. Neither session gets 40P01 (deadlock). (Setup is
-- committed through dblink.)
begin;
select plan(11);

do $$
begin
  perform dblink_connect('setup', pgflow_tests.dblink_connstr());
  perform dblink_exec('setup', $q$do $d$ begin
    perform pgflow.create_flow('lockorder', timeout => 60, max_attempts => 3);
    perform pgflow.add_step('lockorder', 'a');
    perform pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'lockorder', 'lockorder', pgflow.worker_protocol());
    perform pgflow.start_flow('lockorder', '{"n": 1}');
    perform pgflow.start_flow('lockorder', '{"n": 2}');
    perform pgflow.start_flow('lockorder', '{"n": 3}');
    perform pgflow_tests.read_and_start('lockorder', 60, 3);
    -- The third task has been running past its timeout + 30 s: stall recovery wants it.
    update pgflow.step_tasks t set queued_at = now() - interval '3 minutes', started_at = now() - interval '2 minutes'
    from pgflow.runs r where r.run_id = t.run_id and r.input->>'n' = '3';
    -- The handlers overran their timeouts: the messages are visible again.
    perform pgmq.set_vt('lockorder', m.msg_id, 0) from pgmq.q_lockorder m;
  end $d$ $q$);
  perform dblink_connect('reader', pgflow_tests.dblink_connstr());
  perform dblink_connect('result', pgflow_tests.dblink_connstr());
end $$;
select run_id as completed_run from pgflow.runs where input->>'n' = '1' \gset
select run_id as failed_run from pgflow.runs where input->>'n' = '2' \gset
select run_id as stalled_run from pgflow.runs where input->>'n' = '3' \gset
select message_id as completed_msg from pgflow.step_tasks where run_id = :'completed_run' \gset
select pid as result_pid from dblink('result', 'select pg_backend_pid()') as t(pid int) \gset
select pid as reader_pid from dblink('reader', 'select pg_backend_pid()') as t(pid int) \gset

-- The reader reads one message (the oldest visible) in an open transaction; session 'result'
-- runs `call`, and once that has finished or waits for a lock the reader holds, the reader
-- claims the message it holds. Returns whether `call` had finished by then, the claim's
-- outcome, and any error. Only a wait for the reader counts: a brief wait for autovacuum
-- (which CI's load can schedule on these tables) says nothing about the lock order.
create function pg_temp.interleave(call text, result_pid int, reader_pid int, out result_done boolean, out claim text,
                                   out claim_error text, out result_error text)
language plpgsql as $f$
declare
  v_msg bigint;
begin
  perform dblink_exec('reader', 'begin');
  select id into v_msg from dblink('reader', $r$select m.msg_id from pgmq.read('lockorder', 30, 1) m$r$) as t(id bigint);
  perform dblink_send_query('result', call);
  for i in 1 .. 1000 loop
    result_done := dblink_is_busy('result') = 0;
    exit when result_done or reader_pid = any(pg_blocking_pids(result_pid));
    perform pg_sleep(0.01);
  end loop;
  perform dblink_send_query('reader', format(
    $r$select c.outcome from pgflow.claim_tasks('lockorder', 'lockorder', array[%s]::bigint[],
                                                '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c$r$,
    v_msg));
  select x into claim from dblink_get_result('reader', false) as t(x text);
  claim_error := nullif(dblink_error_message('reader'), 'OK');
  perform * from dblink_get_result('reader', false) as t(x text);
  perform dblink_exec('reader', case when claim_error is null then 'commit' else 'rollback' end);
  perform * from dblink_get_result('result', false) as t(x text);
  result_error := nullif(dblink_error_message('result'), 'OK');
  perform * from dblink_get_result('result', false) as t(x text);
end;
$f$;

create temp table step1 as
select * from pg_temp.interleave(format('select status from pgflow.complete_task(%L, ''a'', 0, ''1'')', :'completed_run'), :result_pid, :reader_pid);
select ok((select result_done from step1), 'complete_task commits without waiting for the message a reader holds');
select results_eq($$select claim, claim_error, result_error from step1$$, $$values ('archived', null::text, null::text)$$,
                  'the reader''s claim then archives the completed task''s message; no deadlock on either side');
select is((select status from pgflow.step_tasks where run_id = :'completed_run'), 'completed', 'the task is completed');
select ok(exists (select 1 from pgmq.a_lockorder where msg_id = :completed_msg)
          and not exists (select 1 from pgmq.q_lockorder where msg_id = :completed_msg),
          'and its message archived');

create temp table step2 as
select * from pg_temp.interleave(format('select status from pgflow.fail_task(%L, ''a'', 0, ''flaky'')', :'failed_run'), :result_pid, :reader_pid);
select ok((select result_done from step2), 'fail_task (a retry) commits without waiting for the message a reader holds');
select results_eq($$select claim, claim_error, result_error from step2$$, $$values ('claimed', null::text, null::text)$$,
                  'the reader''s claim then claims the task queued again; no deadlock');
select results_eq(format($$select status, attempts_count, error_message from pgflow.step_tasks where run_id = %L$$, :'failed_run'),
                  $$values ('started', 2, 'flaky')$$, 'the task runs its second attempt');

create temp table step3 as
select * from pg_temp.interleave('select pgflow.requeue_stalled_tasks()::text', :result_pid, :reader_pid);
select ok((select result_done from step3), 'stall recovery commits without waiting for the message a reader holds');
select results_eq($$select claim, claim_error, result_error from step3$$, $$values ('claimed', null::text, null::text)$$,
                  'the reader''s claim then claims the requeued task; no deadlock');
select results_eq(format($$select status, requeued_count from pgflow.step_tasks where run_id = %L$$, :'stalled_run'),
                  $$values ('started', 1)$$, 'the stalled task was requeued once and claimed again');

select is((select count(*)::int from pgflow.step_tasks where status = 'started' and last_claim_id is null), 0,
          'every started task belongs to one of the reader''s claims');

do $$
begin
  perform dblink_disconnect('reader');
  perform dblink_disconnect('result');
  perform dblink_disconnect('setup');
end $$;
select * from finish();
rollback;
