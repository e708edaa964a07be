-- Archives task messages given as (queue, message id) pairs: one pgmq.archive per queue, queues
-- in name order, ids sorted; NULL ids (tasks without a message) are skipped. Idempotent.
-- Locks: the caller holds the tasks' runs; queue rows last (lock order position 5).
-- Called by: _terminate_tasks, complete_tasks.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[])
returns void
language plpgsql volatile
set search_path = ''
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
    perform pgmq.archive(v_batch.queue_name, v_batch.ids);
  end loop;
end;
$$;
