-- A step limit of 2: at most two of the step's tasks hold a slot ('admitted', their messages
-- visible); the others wait 'held' without messages (since 0022) and are admitted oldest first as
-- slots free: a completion, a final failure or a cancellation frees one; a retry and stall
-- recovery keep theirs. (Admission runs at commit; SET CONSTRAINTS ALL IMMEDIATE runs it at the
-- end of each statement of this one transaction.)
begin;
select plan(21);
set constraints all immediate;

select pgflow.ensure_flow_compiled('capped', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work', options => '{"maxAttempts": 2}'))), pgflow.worker_protocol(),
         'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 2}}}')->>'status';

create function pg_temp.gates() returns text language sql as $$
  select format('admitted %s, held %s, visible %s',
    (select count(*) from pgflow.step_tasks where flow_slug = 'capped' and gate = 'admitted' and status in ('queued', 'started')),
    (select count(*) from pgflow.step_tasks where flow_slug = 'capped' and gate = 'held' and status = 'queued'),
    (select count(*) from pgmq.q_capped where vt <= clock_timestamp()))
$$;

-- (A value of the admission record set for the session is not this transaction's: ignored.)
set pgflow.gated_flows = '{capped}';
select pgflow.start_run('capped', jsonb_build_object('n', i)) from generate_series(1, 6) i;
select is(pg_temp.gates(), 'admitted 2, held 4, visible 2', 'six runs: two tasks admitted, four held');
select is((select count(*) from pgflow.step_tasks where flow_slug = 'capped' and gate = 'held' and message_id is not null),
          0::bigint, 'held tasks have no message');
select is((select count(*) from pgmq.q_capped), 2::bigint, 'so the queue holds only the admitted tasks'' messages');
select is(array(select r.input->>'n' from pgflow.step_tasks t join pgflow.runs r using (run_id)
                where t.flow_slug = 'capped' and t.gate = 'admitted' order by 1),
          array(select r.input->>'n' from pgflow.step_tasks t join pgflow.runs r using (run_id)
                where t.flow_slug = 'capped' order by t.queued_at, t.run_id limit 2),
          'the oldest are admitted (queued_at, then run id)');

select count(*) from pgflow_tests.read_and_start('capped', 30, 10);
select is((select count(*) from pgflow.step_tasks where flow_slug = 'capped' and status = 'started'), 2::bigint,
          'a claim finds only the admitted tasks');

select run_id as done_run, step_slug, task_index from pgflow.step_tasks
where flow_slug = 'capped' and status = 'started' order by run_id limit 1 \gset done_
select pgflow.complete_task(:'done_done_run', 'work', 0, '{}');
select is(pg_temp.gates(), 'admitted 2, held 3, visible 1', 'a completion frees a slot: the next task is admitted');
select is((select count(*) from pgflow.step_tasks t join pgmq.q_capped q on q.msg_id = t.message_id
           where t.flow_slug = 'capped' and t.gate = 'admitted' and t.status = 'queued'
             and q.message = jsonb_build_object('flow_slug', 'capped', 'run_id', t.run_id, 'step_slug', 'work', 'task_index', 0)),
          1::bigint, 'and given a message that addresses it');

select count(*) from pgflow_tests.read_and_start('capped', 30, 10);
select run_id as retry_run from pgflow.step_tasks
where flow_slug = 'capped' and status = 'started' order by run_id limit 1 \gset
select pgflow.fail_task(:'retry_run', 'work', 0, 'first attempt');
select is((select status || ' ' || gate from pgflow.step_tasks where run_id = :'retry_run'), 'queued admitted',
          'a failed attempt with retries left keeps its slot');
select is(pg_temp.gates(), 'admitted 2, held 3, visible 0', 'so nothing else is admitted while it backs off');

update pgmq.q_capped set vt = clock_timestamp()
where msg_id = (select message_id from pgflow.step_tasks where run_id = :'retry_run');
select count(*) from pgflow_tests.read_and_start('capped', 30, 10);
select pgflow.fail_task(:'retry_run', 'work', 0, 'last attempt');
select is((select r.status from pgflow.runs r where r.run_id = :'retry_run'), 'failed', 'its last attempt fails the run');
select is(pg_temp.gates(), 'admitted 2, held 2, visible 1', 'which frees its slot');

-- Stall recovery: a claimed task whose worker vanished is queued again, keeping its slot.
select run_id as stalled_run from pgflow.step_tasks
where flow_slug = 'capped' and status = 'started' order by run_id limit 1 \gset
update pgflow.step_tasks set queued_at = now() - interval '2 hours', started_at = now() - interval '1 hour'
where run_id = :'stalled_run';
select pgflow.requeue_stalled_tasks();
select is((select status || ' ' || gate from pgflow.step_tasks where run_id = :'stalled_run'), 'queued admitted',
          'a requeued stalled task keeps its slot');
select is(pg_temp.gates(), 'admitted 2, held 2, visible 2', 'and nothing more is admitted');

-- Cancelling a run: a held task frees nothing; an admitted one frees its slot.
select run_id as held_run from pgflow.step_tasks where flow_slug = 'capped' and gate = 'held' and status = 'queued'
order by queued_at desc, run_id desc limit 1 \gset
select pgflow.cancel_run(:'held_run');
select is(pg_temp.gates(), 'admitted 2, held 1, visible 2', 'cancelling a run whose task waits admits nothing');
select is((select count(*) from pgmq.q_capped where message->>'run_id' = :'held_run'), 0::bigint,
          'and leaves no message of it behind');
select pgflow.cancel_run(:'stalled_run');
select is(pg_temp.gates(), 'admitted 2, held 0, visible 2', 'cancelling a run whose task holds a slot admits the next');

-- A held task given an invisible message by hand (as before 0022): a claim that names it
-- without reading it claims nothing and leaves it invisible; a fatal batch resets every
-- message but that one.
select pgflow.start_run('capped', '{"n": 7}') as held_run \gset
select pgmq.send('capped', jsonb_build_object('flow_slug', 'capped', 'run_id', :'held_run', 'step_slug', 'work',
                                              'task_index', 0), 'infinity'::timestamptz) as held_msg \gset
update pgflow.step_tasks set message_id = :held_msg where run_id = :'held_run';
select pgflow_tests.ensure_worker('capped');
select is((select outcome || ': ' || reason from pgflow.claim_tasks('capped', 'capped', array[:held_msg::bigint],
                                                                   '11111111-1111-1111-1111-111111111111', null)),
          'held: its task waits for a slot under a concurrency limit', 'a held task''s message is not claimed');
select is((select status || ' ' || gate from pgflow.step_tasks where message_id = :held_msg and flow_slug = 'capped'),
          'queued held', 'its task still waits');
select is((select vt from pgmq.q_capped where msg_id = :held_msg), 'infinity'::timestamptz, 'its message is still invisible');
select pgmq.send('capped', '{"flow_slug": "capped", "run_id": "00000000-0000-0000-0000-000000000000"}') as stray \gset
select is(array(select outcome from pgflow.claim_tasks('capped', 'capped', array[:held_msg::bigint, :stray::bigint],
                                                       '11111111-1111-1111-1111-111111111111', null) order by msg_id),
          array['held', 'fatal'], 'in a fatal batch it is reported held');
select is((select vt from pgmq.q_capped where msg_id = :held_msg), 'infinity'::timestamptz, 'and not made visible');

select * from finish();
rollback;
