-- The sweep of concurrency limits: admits the held tasks of every limited flow that has room.
-- A commit normally admits them (_admit_gated_tasks); this catches what no commit did:
-- a task an admission skipped because another transaction held it locked and then rolled
-- back, and the tasks a REPEATABLE READ or SERIALIZABLE transaction queued or freed (it does
-- not admit). With concurrency keys (since 0019) it also activates every key value with waiting
-- tasks and deletes idle ones (_activate_keys). A gate another transaction holds is skipped:
-- that one is admitting. Does nothing outside READ COMMITTED.
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
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return;
  end if;
  for v_flow in
    select g.flow_slug from pgflow.concurrency_gates g
    where exists (select 1 from pgflow.step_tasks t
                  where t.flow_slug = g.flow_slug and t.gate = 'held' and t.status = 'queued')
       or g.has_keys and exists (select 1 from pgflow.concurrency_keys k
                                 where k.flow_slug = g.flow_slug and k.pass is null)
    order by g.flow_slug collate "C"
  loop
    perform pgflow._admit_tasks(v_flow, false);
  end loop;
end;
$$;
