-- The concurrency key value and weight of a run's tasks of one step (since 0019), or NULLs
-- when no key applies to the step: the step's own key, else the flow's. The value is the text
-- at the key's path in the run input (a JSON string unquoted, anything else as JSON text; ''
-- when the input has nothing or null there; a value over 200 bytes is 'md5:' and its hash);
-- the weight the number at its weight path when it is positive (clamped to 0.000001 ..
-- 1,000,000), else 1. Never raises: a run whose input lacks the key still
-- runs, sharing the '' key. PL/pgSQL, not SQL: it is on a start's path (hot_path/no_sql_functions).
-- Called by: _enqueue_step_tasks (a limited step's tasks).
create or replace function pgflow._concurrency_key_of(p_flow_slug text, p_step_slug text, p_input jsonb,
                                                      out key text, out weight real)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key_path text[];
  v_weight_path text[];
begin
  select case when l.key_path is not null then l.key_path else g.key_path end,
         case when l.key_path is not null then l.weight_path else g.weight_path end
  into v_key_path, v_weight_path
  from pgflow.concurrency_gates g
  left join pgflow.step_concurrency_limits l on l.flow_slug = g.flow_slug and l.step_slug = p_step_slug
  where g.flow_slug = p_flow_slug;
  if v_key_path is null then
    return;
  end if;
  key := coalesce(p_input #>> v_key_path, '');
  if octet_length(key) > 200 then
    key := 'md5:' || md5(key);  -- it is indexed: a long value (an object) stands for its hash
  end if;
  weight := case when jsonb_typeof(p_input #> v_weight_path) = 'number'
                      and (p_input #>> v_weight_path)::numeric > 0
                 then greatest(least((p_input #>> v_weight_path)::numeric, 1000000), 0.000001)::real
                 else 1 end;
end;
$$;
