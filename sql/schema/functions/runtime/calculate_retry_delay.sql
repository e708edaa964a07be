-- Upstream's retry backoff: floor(base_delay * 2^attempts_count) seconds, at most 2147483647
-- (the int range, about 68 years; since 0027). Before, the int cast overflowed (22003) from
-- base 5 at attempt 29 (and power() itself past attempt 1023), so every failure report of such
-- a task raised and the task could never fail or retry. Computed in numeric (exact), with the
-- exponent capped at 64: 2^64 times any int base is far past the cap already. STRICT: NULL
-- in, NULL out, as before the cap (least() would turn NULL into the cap).
-- PL/pgSQL since 0016: a SQL function with a SET clause is never inlined, so every failure
-- parsed and planned its body again (sql/schema/README.md, Plans).
-- Locks: none.
-- Called by: _fail_task.
create or replace function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language plpgsql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  return least(floor(base_delay * power(2::numeric, least(attempts_count, 64))), 2147483647)::int;
end;
$$;
