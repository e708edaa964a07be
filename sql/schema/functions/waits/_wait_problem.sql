-- What is wrong with a wait step's `wait` (NULL when nothing is). Valid values:
--   {"kind": "signal"}                       waits for pgflow.send_signal, for ever
--   {"kind": "signal", "timeout": N}         ... for N seconds (N > 0); then the task fails
--                                            (no retries) and the step's whenExhausted applies
--   {"kind": "signal", "timeout": N, "timeoutOutput": V}
--                                            ... then completes with output V instead
--   {"kind": "sleep", "seconds": N}          completes N seconds (N >= 0) after it starts
--   {"kind": "sleep", "until": ["run", "k"]} completes at the timestamp at that path of the
--                                            step's input (single steps only)
-- Called by: the steps.wait_is_valid check, _add_step (which names the step in its error).
create or replace function pgflow._wait_problem(p_wait jsonb, p_step_type text) returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_kind text := p_wait->>'kind';
  v_allowed text[];
  v_key text;
begin
  if jsonb_typeof(p_wait) is distinct from 'object' then
    return 'must be a JSON object';
  end if;
  if jsonb_typeof(p_wait->'kind') is distinct from 'string' or v_kind not in ('signal', 'sleep') then
    return 'needs "kind": "signal" or "sleep"';
  end if;
  v_allowed := case v_kind when 'signal' then array['kind', 'timeout', 'timeoutOutput']
                           else array['kind', 'seconds', 'until'] end;
  select k into v_key from jsonb_object_keys(p_wait) k where k <> all(v_allowed) order by k limit 1;
  if v_key is not null then
    return format('has an unknown key "%s" (a %s wait takes %s)', v_key, v_kind,
                  array_to_string(v_allowed, ', '));
  end if;
  if v_kind = 'signal' then
    if p_wait ? 'timeout' and not pgflow._is_whole_seconds(p_wait->'timeout', 1) then
      return '"timeout" must be a whole number of seconds, at least 1';
    end if;
    if p_wait ? 'timeoutOutput' and not p_wait ? 'timeout' then
      return '"timeoutOutput" needs a "timeout"';
    end if;
    return null;
  end if;
  if (p_wait ? 'seconds') = (p_wait ? 'until') then
    return 'a sleep needs exactly one of "seconds" and "until"';
  end if;
  if p_wait ? 'seconds' and not pgflow._is_whole_seconds(p_wait->'seconds', 0) then
    return '"seconds" must be a whole number of seconds, at least 0';
  end if;
  if p_wait ? 'until' then
    if p_step_type = 'map' then
      return 'a map step sleeps for "seconds": "until" reads a single step''s input';
    end if;
    if jsonb_typeof(p_wait->'until') is distinct from 'array' or jsonb_array_length(p_wait->'until') = 0
       or exists (select 1 from jsonb_array_elements(p_wait->'until') e
                  where jsonb_typeof(e) <> 'string') then
      return '"until" must be a non-empty array of keys (a path into the step''s input, e.g. ["run", "ship_at"])';
    end if;
  end if;
  return null;
end;
$$;
