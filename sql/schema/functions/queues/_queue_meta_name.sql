-- The exact pgmq.meta spelling of a queue, for metadata-sensitive PGMQ calls (drop_queue).
-- Fails unless exactly one pgmq.meta row matches ignoring case (aliases such as "Orders" and
-- "orders" address the same tables) and both of its tables exist.
-- Locks: none (reads pgmq.meta).
-- Called by: _provision_flow_queue, _delete_flow_contents, _verify_step_queues.
create or replace function pgflow._queue_meta_name(p_queue_name text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_names text[];
begin
  select array_agg(m.queue_name::text order by m.queue_name) into v_names
  from pgmq.meta m where lower(m.queue_name) = lower(p_queue_name);
  if v_names is null then
    raise exception 'PGMQ queue "%" does not exist (no pgmq.meta row)', p_queue_name
      using errcode = 'undefined_object';
  elsif cardinality(v_names) > 1 then
    raise exception 'PGMQ queue "%" is ambiguous: pgmq.meta has % rows for the same tables (%); keep one',
      p_queue_name, cardinality(v_names), array_to_string(v_names, ', ')
      using errcode = 'cardinality_violation';
  end if;
  if to_regclass(format('pgmq.%I', 'q_' || lower(p_queue_name))) is null
     or to_regclass(format('pgmq.%I', 'a_' || lower(p_queue_name))) is null then
    raise exception 'PGMQ queue "%" is malformed: table pgmq.q_% or pgmq.a_% is missing',
      v_names[1], lower(p_queue_name), lower(p_queue_name)
      using errcode = 'undefined_table';
  end if;
  return v_names[1];
end;
$$;
