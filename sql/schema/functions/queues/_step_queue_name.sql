-- The private queue of a step of a step-queued flow: lower(flow_slug || '__' || step_slug)
-- when it fits PGMQ's 47 characters, else lower(flow_slug || '__' || step_index) (zero-based;
-- it cannot equal a readable name because slugs cannot start with a digit), else NULL: the
-- flow cannot use step queues and is rejected whole. Never truncated, never hashed. Slugs
-- cannot contain `__`, so the separator is unambiguous and no two flows derive the same name.
-- The C++ SDK derives the same names (pgflow::routes_of); tests/data/step_queue_names.tsv
-- drives both.
-- Called by: _flow_route.
create or replace function pgflow._step_queue_name(p_flow_slug text, p_step_slug text, p_step_index int)
returns text
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select case
    when length(p_flow_slug) + 2 + length(p_step_slug) <= 47
      then lower(p_flow_slug || '__' || p_step_slug)
    when length(p_flow_slug) + 2 + length(p_step_index::text) <= 47
      then lower(p_flow_slug || '__' || p_step_index)
  end
$$;
