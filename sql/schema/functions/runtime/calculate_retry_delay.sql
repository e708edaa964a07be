-- Upstream's retry backoff: floor(base_delay * 2^attempts_count) seconds.
-- PL/pgSQL since 0016: a SQL function with a SET clause is never inlined, so every failure
-- parsed and planned its body again (sql/schema/README.md, Plans).
-- Called by: _fail_task.
create or replace function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  return floor(base_delay * power(2, attempts_count))::int;
end;
$$;
