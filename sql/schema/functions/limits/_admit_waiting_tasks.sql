-- The sweep of concurrency limits: admits the held tasks of every limited flow that has room.
-- A commit normally admits them (_admit_gated_tasks); this catches what no commit did:
-- a task an admission skipped because another transaction held it locked and then rolled
-- back, and the tasks a REPEATABLE READ or SERIALIZABLE transaction queued or freed (it does
-- not admit). With concurrency keys (since 0019) it also activates every key value with waiting
-- tasks and deletes idle ones (_activate_keys). A gate another transaction holds is skipped:
-- that one is admitting. Does nothing outside READ COMMITTED.
-- It also consumes this transaction's own record (since 0027): the flows and key values that
-- the caller's earlier changes recorded for the commit (_note_gated_task: stall recovery's
-- _fail_task ending an admitted task records its flow) are admitted here, first (since 0028
-- through _admit_recorded_flows; no admission here waits for a gate, so the order holds no
-- lock order), and the record is cleared, so the commit admits nothing and never waits for a
-- gate row. Before,
-- the commit then waited for such a flow's gate while this sweep still held gate rows it had
-- taken after it in byte order, and deadlocked (40P01) with a transaction committing tasks of
-- both flows. A recorded flow whose gate another transaction holds is skipped like any other:
-- the slot this transaction frees is admitted by that flow's next admission (any commit that
-- queues a held task of it or frees one of its slots) or by the next sweep.
-- Locks: gate rows (never waited for) -> key value rows -> held task rows (never waited for);
-- the messages it sends are new queue rows (since 0022).
-- Called by: requeue_stalled_tasks (each pass of stall recovery: live workers call it every
-- stall_recovery_interval).
create or replace function pgflow._admit_waiting_tasks()
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flow text;
  v_admitted text[];
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return;
  end if;
  -- This transaction's record, taken over from the commit (see above).
  v_admitted := pgflow._admit_recorded_flows(false);
  for v_flow in
    select g.flow_slug from pgflow.concurrency_gates g
    where g.flow_slug <> all(v_admitted)  -- (admitted above already)
      and (exists (select 1 from pgflow.step_tasks t
                   where t.flow_slug = g.flow_slug and t.gate = 'held' and t.status = 'queued')
           or g.has_keys and exists (select 1 from pgflow.concurrency_keys k
                                     where k.flow_slug = g.flow_slug and k.pass is null))
    order by g.flow_slug collate "C"
  loop
    perform pgflow._admit_tasks(v_flow, false);
  end loop;
end;
$$;
