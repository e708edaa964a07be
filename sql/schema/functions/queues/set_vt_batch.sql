-- Upstream's batch visibility update: sets each message's visibility to clock_timestamp() +
-- its offset in seconds and returns the updated rows (headers included, PGMQ 1.5).
-- Locks: the queue rows it updates.
-- Called by: claim_tasks, _refuse_claim_batch; SQL users.
create or replace function pgflow.set_vt_batch(queue_name text, msg_ids bigint[], vt_offsets integer[])
returns table (msg_id bigint, read_ct integer, enqueued_at timestamptz, vt timestamptz,
               message jsonb, headers jsonb)
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if msg_ids is null or vt_offsets is null or cardinality(msg_ids) = 0 then
    return;
  end if;
  if cardinality(msg_ids) <> cardinality(vt_offsets) then
    raise exception 'msg_ids length (%) must equal vt_offsets length (%)',
      cardinality(msg_ids), cardinality(vt_offsets);
  end if;
  return query execute format(
    'update pgmq.%I q set vt = clock_timestamp() + make_interval(secs => u.off)
     from unnest($1, $2) as u(id, off)
     where q.msg_id = u.id
     returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message, q.headers',
    pgmq.format_table_name(queue_name, 'q'))
  using msg_ids, vt_offsets;
end;
$$;
