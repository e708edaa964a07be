-- Upstream's slug predicate, under the shared rules of _slug_problem. The check constraints on
-- flows.flow_slug and steps.step_slug use it, so it is built before the tables.
-- Locks: none (immutable).
-- Called by: the check constraints slug_is_valid, flow_alias_is_valid and steps_step_slug_check;
-- SQL users.
create or replace function pgflow.is_valid_slug(slug text) returns boolean
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select pgflow._slug_problem(slug) is null
$$;
