-- Whether `p_value` is a JSON integer from `p_min` to 2^31 - 1 (seconds of a wait).
-- Called by: _wait_problem.
create or replace function pgflow._is_whole_seconds(p_value jsonb, p_min int) returns boolean
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select jsonb_typeof(p_value) = 'number'
     and (p_value::text)::numeric = trunc((p_value::text)::numeric)
     and (p_value::text)::numeric between p_min and 2147483647
$$;
