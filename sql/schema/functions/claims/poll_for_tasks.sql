-- Deprecated since upstream 0.3.0; kept so old callers get a clear notice instead of an error.
create or replace function pgflow.poll_for_tasks(queue_name text, vt integer, qty integer,
                                      max_poll_seconds integer default 5,
                                      poll_interval_ms integer default 100)
returns setof pgflow.step_task_record
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  raise notice 'DEPRECATED: poll_for_tasks is deprecated and returns nothing; read messages with pgmq.read_with_poll and claim them with pgflow.start_tasks';
  return;
end;
$$;
