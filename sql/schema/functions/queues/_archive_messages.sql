-- Archives task messages given as (queue, message id) pairs: one pgmq.archive per queue, queues
-- in name order, ids sorted; NULL ids (tasks without a message) are skipped. Idempotent.
-- With `p_skip_locked`, a message another session holds locked is left where it is: a worker
-- that has just read it (pgmq.read) and now waits in claim_tasks for the run the caller holds.
-- Waiting for that message would deadlock (the reader waits for the run, the caller for the
-- message); once the caller commits, the reader's claim archives it because its task has ended
-- (_classify_claim_batch).
-- Locks: the caller holds the tasks' runs; queue rows last (lock order position 5).
-- Called by: _terminate_tasks (skipping locked messages), complete_tasks.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[],
                                                    p_skip_locked boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_batch record;
  v_ids bigint[];
begin
  for v_batch in
    select m.queue_name, array_agg(m.id order by m.id) as ids
    from unnest(p_queue_names, p_message_ids) m(queue_name, id)
    where m.id is not null
    group by m.queue_name
    order by m.queue_name
  loop
    v_ids := v_batch.ids;
    if p_skip_locked then
      execute format('select coalesce(array_agg(x.msg_id order by x.msg_id), ''{}'') from ('
                     'select q.msg_id from pgmq.%I q where q.msg_id = any($1) order by q.msg_id '
                     'for update skip locked) x', 'q_' || v_batch.queue_name)
      into v_ids using v_ids;
    end if;
    if cardinality(v_ids) > 0 then
      perform pgmq.archive(v_batch.queue_name, v_ids);
    end if;
  end loop;
end;
$$;
