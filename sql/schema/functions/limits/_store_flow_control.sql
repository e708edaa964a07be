-- Persists a flow's normalized flow-control options (_normalize_flow_control), replacing any
-- it had: a gate row when any limit is set (with the flow's key), a row per step with a limit
-- or a key of its own, and which steps a limit applies to (steps.concurrency_limited, read by
-- the starts).
-- Locks: the caller holds the flow's definition lock; the gate row.
-- Called by: ensure_flow_compiled (a flow it compiles or recompiles).
create or replace function pgflow._store_flow_control(p_flow_slug text, p_flow_control jsonb)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  delete from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug;
  update pgflow.steps s
  set concurrency_limited = p_flow_control ? 'concurrencyLimit'
                            or coalesce(p_flow_control#>array['steps', s.step_slug], '{}') ? 'concurrencyLimit'
  where s.flow_slug = p_flow_slug;
  if p_flow_control = '{}' then
    return;
  end if;
  insert into pgflow.concurrency_gates (flow_slug, flow_limit, key_path, key_limit, weight_path, has_keys)
  values (p_flow_slug, (p_flow_control->>'concurrencyLimit')::int,
          pgflow._json_path(p_flow_control#>'{concurrencyKey,path}'),
          (p_flow_control#>>'{concurrencyKey,limit}')::int,
          pgflow._json_path(p_flow_control#>'{concurrencyKey,weightPath}'),
          p_flow_control ? 'concurrencyKey'
          or exists (select 1 from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s
                     where s.value ? 'concurrencyKey'));
  insert into pgflow.step_concurrency_limits (flow_slug, step_slug, step_limit, key_path, key_limit, weight_path)
  select p_flow_slug, s.key, (s.value->>'concurrencyLimit')::int,
         pgflow._json_path(s.value#>'{concurrencyKey,path}'),
         (s.value#>>'{concurrencyKey,limit}')::int,
         pgflow._json_path(s.value#>'{concurrencyKey,weightPath}')
  from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s;
end;
$$;

-- A JSON array of texts as text[] (NULL for NULL).
-- Called by: _store_flow_control.
create or replace function pgflow._json_path(p_path jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_path is not null then array(select jsonb_array_elements_text(p_path)) end
$$;
