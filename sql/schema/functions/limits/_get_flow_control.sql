-- A flow's stored flow-control options in _normalize_flow_control's spelling ('{}' for none).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_control(p_flow_slug text)
returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce((select jsonb_strip_nulls(jsonb_build_object('concurrencyLimit', g.flow_limit))
                   from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug), '{}')
         || coalesce((select jsonb_build_object('steps', jsonb_object_agg(l.step_slug,
                                                  jsonb_build_object('concurrencyLimit', l.step_limit)))
                      from pgflow.step_concurrency_limits l where l.flow_slug = p_flow_slug
                      having count(*) > 0), '{}')
$$;
