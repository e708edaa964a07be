-- The route a definition gets, derived from its shape and queue mode: for each step, in shape
-- order, the queue its tasks go to. Queue mode `flow`: the flow's generated queue
-- lower(flow_slug) for every step. Queue mode `step`: each step's private queue
-- (_step_queue_name; NULL when the name cannot fit).
-- Called by: ensure_flow_compiled, _create_flow_from_shape, _preflight_flow_shape.
create or replace function pgflow._flow_route(p_flow_slug text, p_shape jsonb, p_queue_mode text)
returns table (step_index int, step_slug text, queue_name text)
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select (e.n - 1)::int, e.step->>'slug',
         case when p_queue_mode = 'step'
              then pgflow._step_queue_name(p_flow_slug, e.step->>'slug', (e.n - 1)::int)
              else lower(p_flow_slug) end
  from jsonb_array_elements(p_shape->'steps') with ordinality as e(step, n)
  order by e.n
$$;
