-- The flow shape as stored (upstream's shape JSON without options: the database never reports
-- them, they are runtime-tunable). Dependencies sort by byte order (collation "C"), as
-- upstream's JavaScript sort does. A wait step (since 0021) has a "wait" key, after the others;
-- no other step has one, so flows without waits keep upstream's shape byte for byte and a
-- shape without waits (an upstream worker's) never matches a flow that has them.
-- Locks: none (reads).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_shape(p_flow_slug text) returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select jsonb_build_object('steps', coalesce(jsonb_agg(
    jsonb_build_object(
      'slug', s.step_slug,
      'stepType', s.step_type,
      'dependencies', coalesce((
        select jsonb_agg(d.dep_slug order by d.dep_slug collate "C") from pgflow.deps d
        where d.flow_slug = s.flow_slug and d.step_slug = s.step_slug), '[]'::jsonb),
      'whenUnmet', s.when_unmet,
      'whenExhausted', s.when_exhausted,
      'requiredInputPattern', case when s.required_input_pattern is null
        then '{"defined": false}'::jsonb
        else jsonb_build_object('defined', true, 'value', s.required_input_pattern) end,
      'forbiddenInputPattern', case when s.forbidden_input_pattern is null
        then '{"defined": false}'::jsonb
        else jsonb_build_object('defined', true, 'value', s.forbidden_input_pattern) end)
    || case when s.wait is not null then jsonb_build_object('wait', s.wait) else '{}'::jsonb end
    order by s.step_index), '[]'::jsonb))
  from pgflow.steps s
  where s.flow_slug = p_flow_slug
$$;
