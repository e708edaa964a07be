-- Archives task messages given as (queue, message id) pairs: one pgmq.archive per queue, queues
-- in name order, ids sorted; NULL ids (tasks without a message) are skipped. Idempotent.
-- A message another session holds locked is left where it is (SKIP LOCKED): its holder is a
-- worker that has just read it (pgmq.read) and now waits in claim_tasks for the run the caller
-- holds, and waiting for it would deadlock (the reader waits for the run, the caller for the
-- message). Once the caller commits, the reader's claim archives it, because its task has
-- ended (_classify_claim_batch); if the reader's transaction fails instead, the message becomes
-- visible and the next claim does (sql/schema/README.md, "Lock order").
-- Locks: the caller holds the tasks' runs; queue rows last, never waited for.
-- Called by: _terminate_tasks, complete_tasks, _archive_task_message.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[])
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_batch record;
begin
  for v_batch in
    select m.queue_name, array_agg(m.id order by m.id) as ids
    from unnest(p_queue_names, p_message_ids) m(queue_name, id)
    where m.id is not null
    group by m.queue_name
    order by m.queue_name
  loop
    -- pgmq.archive's statement (PGMQ 1.5's columns), taking only the rows nobody holds: one
    -- statement per queue, as pgmq.archive alone was before 0014.
    execute format($sql$
      with held as (
        select q.msg_id from pgmq.%1$I q where q.msg_id = any($1) order by q.msg_id for update skip locked),
      gone as (
        delete from pgmq.%1$I q using held where q.msg_id = held.msg_id
        returning q.msg_id, q.vt, q.read_ct, q.enqueued_at, q.message, q.headers)
      insert into pgmq.%2$I (msg_id, vt, read_ct, enqueued_at, message, headers)
      select msg_id, vt, read_ct, enqueued_at, message, headers from gone
      $sql$, 'q_' || v_batch.queue_name, 'a_' || v_batch.queue_name)
    using v_batch.ids;
  end loop;
end;
$$;
