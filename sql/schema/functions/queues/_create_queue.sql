-- Creates a generated queue for the definition this transaction persists, and makes sure this
-- transaction created it. pgmq.create() is idempotent, so a queue someone else created
-- meanwhile (its pgmq.meta row carries another transaction's start time) or an alias row for
-- the same tables is refused, never adopted.
-- Locks: pgmq.meta and the queue's new tables (pgmq.create). The caller holds the flow's
-- definition lock and has checked that nothing holds the name.
-- Called by: _provision_flow_queue, _create_flow_from_shape (step queues).
create or replace function pgflow._create_queue(p_queue_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  begin
    perform pgmq.create(p_queue_name);
  exception when unique_violation then
    -- Another session created the same tables and committed while this one waited for them.
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
  end;
  if (select count(*) from pgmq.meta m where lower(m.queue_name) = p_queue_name) <> 1
     or not exists (select 1 from pgmq.meta m
                    where m.queue_name = p_queue_name and m.created_at = now()) then
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
  end if;
end;
$$;
