-- Upstream 0.16.0 workers start with track_worker_function(name): it now refuses them with the
-- protocol error, so they stop before they register or poll.
create or replace function pgflow.track_worker_function(function_name text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._require_worker_protocol(null);
end;
$$;
