-- The deadlock 0027 removed, played with two sessions. A transaction that frees slots of two
-- limited flows admits at its commit, taking their gate rows in slug order ('lim_a', then
-- 'lim_b'). Session a stands for it, stopped between the two: it holds lim_a's gate and then
-- asks for lim_b's. Stall recovery (this session) frees a slot of each flow. Its sweep takes the
-- gates it can without waiting (lim_b's), skips lim_a's, and holds lim_b's until it commits, so
-- a waits for it. Before 0027 its commit then waited for lim_a's gate to admit the slot it freed
-- there: each session waited for the other (40P01). Now the sweep consumes the pass's own
-- record, the commit admits nothing, and both go on; the slot the skipped gate left is admitted
-- by a later pass. (Commits for real: this file runs in its own database.)
select pgflow.ensure_flow_compiled(slug, jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work', options => '{"maxAttempts": 1, "timeout": 60}'))),
       pgflow.worker_protocol(), 'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 1}}}')->>'status'
from unnest(array['lim_a', 'lim_b']) slug;
select pgflow.register_worker(('b0000000-0000-0000-0000-00000000000' || n)::uuid, 'w' || slug, slug, slug, pgflow.worker_protocol())
from unnest(array['lim_a', 'lim_b'], array[1, 2]) u(slug, n);
-- Per flow: run 1's task claimed (it holds the slot), run 2's held behind it.
select pgflow.start_run_by_slug(slug, '{}', ('c000000' || n || '-0000-0000-0000-000000000001')::uuid),
       pgflow.start_run_by_slug(slug, '{}', ('c000000' || n || '-0000-0000-0000-000000000002')::uuid)
from unnest(array['lim_a', 'lim_b'], array[1, 2]) u(slug, n);
select count(*) from unnest(array['lim_a', 'lim_b'], array[1, 2]) u(slug, n),
  lateral pgflow.claim_tasks(slug, slug,
                             array(select message_id from pgflow.step_tasks t
                                   where t.flow_slug = u.slug and message_id is not null),
                             ('b0000000-0000-0000-0000-00000000000' || n)::uuid);
-- Both claimed tasks stalled long ago, with no attempt left: the pass fails them (exhausted).
update pgflow.step_tasks set queued_at = now() - interval '1 hour', started_at = now() - interval '1 hour'
where status = 'started';

select plan(7);
create function pg_temp.tasks() returns text language sql as $$
  select string_agg(flow_slug || ' ' || right(run_id::text, 1) || ' ' || gate || ' ' || status, ', '
                    order by flow_slug, run_id)
  from pgflow.step_tasks
$$;
select is(pg_temp.tasks(),
          'lim_a 1 admitted started, lim_a 2 held queued, lim_b 1 admitted started, lim_b 2 held queued',
          'each flow: run 1''s stalled task holds the slot, run 2''s waits');

select dblink_connect('a', pgflow_tests.dblink_connstr());
select pid as a_pid from dblink('a', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('a', 'begin');
select dblink_exec('a', $$update pgflow.concurrency_gates set turn = turn + 1 where flow_slug = 'lim_a'$$);

-- A lock wait fails this test instead of hanging it (a deadlock is reported after deadlock_timeout).
set lock_timeout = '20s';
begin;
select is(pgflow.requeue_stalled_tasks(), 0, 'the pass requeues nothing: both stalled tasks are exhausted');
select dblink_send_query('a', $$update pgflow.concurrency_gates set turn = turn + 1 where flow_slug = 'lim_b' returning 'lim_b'$$);
select ok(pgflow_tests.wait_for_lock(:a_pid), 'session a, holding lim_a''s gate, waits for lim_b''s, which the sweep holds');
commit;
select pass('the pass commits while a holds lim_a''s gate: its commit waits for no gate');
reset lock_timeout;
select * from dblink_get_result('a', false) as t(x text);
select is(dblink_error_message('a'), 'OK', 'and a gets lim_b''s gate: nobody deadlocked');
select * from dblink_get_result('a', false) as t(x text);
select dblink_exec('a', 'commit');
select dblink_disconnect('a');

select is(pg_temp.tasks(),
          'lim_a 1 admitted failed, lim_a 2 held queued, lim_b 1 admitted failed, lim_b 2 admitted queued',
          'the sweep admitted into lim_b''s freed slot; lim_a''s gate was busy, so its task still waits');
select pgflow.requeue_stalled_tasks();
select is(pg_temp.tasks(),
          'lim_a 1 admitted failed, lim_a 2 admitted queued, lim_b 1 admitted failed, lim_b 2 admitted queued',
          'the next pass admits it');
select * from finish();
