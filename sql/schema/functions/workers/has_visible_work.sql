-- Whether the queue of registered worker `worker_id` holds a message that a read would return
-- now (vt <= clock_timestamp()). A poll-only worker looks before it claims while its queue is
-- idle: the look reads the first entry of the queue's vt index, where an empty read-and-claim
-- plans the read's update and checks the worker's subscription (an idle fleet of 20 poll-only
-- workers costs the server about half as much looking as claiming: bench/README.md, p6). A
-- true answer promises nothing: another worker may claim the message first, and the worker's
-- claim then finds none. A worker whose function is paused is told there is nothing (since
-- 0026: its claims would claim nothing).
-- Locks: none.
-- Called by: the poller of a poll-only worker, after a read that found nothing (schema 0020).
create or replace function pgflow.has_visible_work(worker_id uuid) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_paused boolean;
  v_visible boolean;
begin
  select w.queue_name, f.paused_at is not null into v_queue, v_paused
  from pgflow.workers w
  left join pgflow.worker_functions f on f.function_name = w.function_name
  where w.worker_id = has_visible_work.worker_id;
  if not found then
    raise exception 'Worker % is not registered (register_worker)', has_visible_work.worker_id
      using errcode = 'no_data_found';
  end if;
  if v_paused then
    return false;
  end if;
  if pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', 'q_' || v_queue)) is null then
    raise exception 'Queue "%" of worker % does not exist', v_queue, has_visible_work.worker_id
      using errcode = 'undefined_table';
  end if;
  -- The earliest vt, from the queue's vt index (order by + limit 1: no plan without it).
  execute pg_catalog.format(
    'select q.vt <= pg_catalog.clock_timestamp() from pgmq.%I q order by q.vt limit 1',
    'q_' || v_queue) into v_visible;
  return coalesce(v_visible, false);  -- an empty queue
end;
$$;

-- SECURITY DEFINER: it reads the queue of the worker's registration as the owner, so it needs
-- no privilege on the queue (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.has_visible_work(uuid) from public;
