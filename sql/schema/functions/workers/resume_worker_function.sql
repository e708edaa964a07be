-- The operator command that lets a worker function paused by a fatal claim start again.
-- Called by: operators.
create or replace function pgflow.resume_worker_function(function_name text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  update pgflow.worker_functions w set paused_at = null, pause_reason = null, updated_at = clock_timestamp()
  where w.function_name = resume_worker_function.function_name;
  if not found then
    raise exception 'Worker function "%" does not exist', resume_worker_function.function_name
      using errcode = 'no_data_found';
  end if;
end;
$$;
