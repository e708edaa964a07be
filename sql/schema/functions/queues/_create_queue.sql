-- Creates a generated queue for the definition this transaction persists, and makes sure this
-- transaction created it. pgmq.create() is idempotent, so a queue someone else created
-- meanwhile (its pgmq.meta row carries another transaction's start time) or an alias row for
-- the same tables is refused, never adopted.
-- SECURITY DEFINER: queues are created by, and owned by, the owner of schema pgflow (the role
-- that ran `pgflow migrate`), never by the worker compiling a flow - a worker needs no CREATE on
-- schema pgmq, and with the pgmq extension only the extension's owner can add queue tables to
-- it. Only queue names pgflow derives from an existing flow (lower(flow_slug), or a step queue
-- lower(flow_slug) || '__' || ...) are created. Its callers run as the owner too (the worker
-- compiles through ensure_flow_compiled, SECURITY DEFINER since schema 0012), so no other role
-- needs EXECUTE.
-- Locks: pgmq.meta and the queue's new tables (pgmq.create). The caller holds the flow's
-- definition lock and has checked that nothing holds the name.
-- Called by: _provision_flow_queue, _create_flow_from_shape (step queues).
create or replace function pgflow._create_queue(p_queue_name text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if not exists (select 1 from pgflow.flows f
                 where p_queue_name = lower(f.flow_slug)
                    or starts_with(p_queue_name, lower(f.flow_slug) || '__')) then
    raise exception 'PGMQ queue "%" is not the queue of a pgflow flow; pgflow creates only its flows'' queues', p_queue_name
      using errcode = 'insufficient_privilege';
  end if;
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

-- SECURITY DEFINER: runs as the schema owner, so nobody else calls it.
revoke execute on function pgflow._create_queue(text) from public;
