-- Upstream's building block: creates only the flow definition, as its own alias (see
-- _create_flow). Idempotent for an existing flow, whatever its alias.
-- Locks: see _create_flow.
-- Called by: SQL users building a flow by hand.
create or replace function pgflow.create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null
) returns pgflow.flows
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  select * from pgflow._create_flow(create_flow.flow_slug, create_flow.max_attempts,
                                    create_flow.base_delay, create_flow.timeout)
$$;
