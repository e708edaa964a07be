-- The shape with upstream's defaults for what older upstream DSL versions did not write: a
-- step without whenUnmet skips, without whenExhausted fails, and a missing input pattern is
-- not defined. Values that are present are kept as they are (validated elsewhere), so a
-- current shape comes back unchanged.
-- Called by: ensure_flow_compiled (before comparing with the stored shape).
create or replace function pgflow._with_shape_defaults(p_shape jsonb) returns jsonb
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case
    when jsonb_typeof(p_shape->'steps') is distinct from 'array' then p_shape
    else jsonb_set(p_shape, '{steps}', coalesce((
      select jsonb_agg(case when jsonb_typeof(s.step) = 'object'
                            then jsonb_build_object('whenUnmet', 'skip', 'whenExhausted', 'fail',
                                                    'requiredInputPattern', jsonb_build_object('defined', false),
                                                    'forbiddenInputPattern', jsonb_build_object('defined', false))
                                 || s.step
                            else s.step end
                       order by s.ord)
      from jsonb_array_elements(p_shape->'steps') with ordinality s(step, ord)), '[]'::jsonb))
  end
$$;
