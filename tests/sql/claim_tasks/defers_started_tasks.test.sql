-- Outcome "deferred": a message whose task is already running is not claimed again (no new
-- attempt); it is hidden until the task's stall-recovery deadline started_at + effective
-- timeout + 30 s — not a fresh timeout from now — and for at least 5 s.
begin;
select plan(8);

select pgflow.create_flow('f', timeout => 20);
select pgflow.add_step('f', 'a');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as msg from pgflow.step_tasks \gset
select count(*) from pgflow.claim_tasks('f', 'f', array[:msg]::bigint[], '11111111-1111-1111-1111-111111111111');

create function pg_temp.claim_again() returns setof pgflow.claim_record language sql as $$
  select * from pgflow.claim_tasks('f', 'f', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111')
$$;
create function pg_temp.vt_minus_deadline() returns numeric language sql as $$
  select extract(epoch from q.vt - (t.started_at + interval '50 seconds'))
  from pgmq.q_f q join pgflow.step_tasks t on t.message_id = q.msg_id
$$;

select results_eq($$select outcome, run_id, step_slug, task_index, attempt, input, flow_input, reason from pg_temp.claim_again()$$,
                  format($$values ('deferred'::text, %L::uuid, 'a'::text, 0, null::int, null::jsonb, null::jsonb, 'its task is already running'::text)$$, :'run'),
                  'a running task''s message is deferred, with its task address and no input');
select results_eq($$select status, attempts_count, started_at = now() from pgflow.step_tasks$$,
                  $$values ('started'::text, 1, true)$$, 'the task is unchanged (no second attempt)');
select ok(pg_temp.vt_minus_deadline() >= 0 and pg_temp.vt_minus_deadline() < 1.5,
          'just started: hidden until started_at + 20 s + 30 s');

-- Started 30 s ago: the deadline is 20 s away; a fresh claim visibility would be 22 s, a
-- fresh deadline 50 s.
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '30 seconds';
select is((select outcome from pg_temp.claim_again()), 'deferred', 'started 30 s ago: deferred');
select ok(pg_temp.vt_minus_deadline() >= 0 and pg_temp.vt_minus_deadline() < 1.5,
          'hidden until the same deadline (started_at + 50 s), not a fresh timeout');

-- Past its deadline (stall recovery has not run yet): hidden for 5 s.
update pgflow.step_tasks set started_at = now() - interval '10 minutes';
select clock_timestamp() as t0 \gset
select is((select outcome from pg_temp.claim_again()), 'deferred', 'past its deadline: still deferred');
select clock_timestamp() as t1 \gset
select ok((select vt between :'t0'::timestamptz + interval '5 s' and :'t1'::timestamptz + interval '5 s' from pgmq.q_f),
          'hidden for the minimum of 5 s');
select is((select attempts_count from pgflow.step_tasks), 1, 'still one attempt');

select * from finish();
rollback;
