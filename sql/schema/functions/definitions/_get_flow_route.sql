-- A flow's persisted route as upstream's route map: [{"stepSlug", "queueName"}] in step order
-- (steps.queue_name; there is no registry table).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_route(p_flow_slug text) returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(jsonb_agg(jsonb_build_object('stepSlug', s.step_slug, 'queueName', s.queue_name)
                            order by s.step_index), '[]'::jsonb)
  from pgflow.steps s
  where s.flow_slug = p_flow_slug
$$;
