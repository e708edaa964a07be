-- A stored concurrency key in _normalize_flow_control's spelling; NULL without a key.
-- Called by: _get_flow_control.
create or replace function pgflow._concurrency_key_json(p_path text[], p_limit int, p_weight_path text[])
returns jsonb
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_path is not null then
    jsonb_strip_nulls(jsonb_build_object('path', to_jsonb(p_path), 'limit', p_limit,
                                         'weightPath', to_jsonb(p_weight_path)))
  end
$$;

-- A flow's stored flow-control options in _normalize_flow_control's spelling ('{}' for none).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_control(p_flow_slug text)
returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce((select jsonb_strip_nulls(jsonb_build_object(
                            'concurrencyLimit', g.flow_limit,
                            'concurrencyKey', pgflow._concurrency_key_json(g.key_path, g.key_limit, g.weight_path)))
                   from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug), '{}')
         || coalesce((select jsonb_build_object('steps', jsonb_object_agg(l.step_slug, jsonb_strip_nulls(jsonb_build_object(
                                                  'concurrencyLimit', l.step_limit,
                                                  'concurrencyKey', pgflow._concurrency_key_json(l.key_path, l.key_limit, l.weight_path)))))
                      from pgflow.step_concurrency_limits l where l.flow_slug = p_flow_slug
                      having count(*) > 0), '{}')
$$;
