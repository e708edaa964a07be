-- Upstream's retry backoff: floor(base_delay * 2^attempts_count) seconds.
-- Called by: _fail_task.
create or replace function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select floor(base_delay * power(2, attempts_count))::int
$$;
