-- Human-readable routing differences between a worker's deployment (queue mode and route map)
-- and the persisted one, worker first: a different queue mode (every route differs then, so
-- only the mode is reported), else each step whose queue differs. Steps present on one side
-- only are shape differences, reported by _compare_flow_shapes.
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_routes(p_local_mode text, p_local_route jsonb,
                                                       p_db_mode text, p_db_route jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case
    when p_local_mode is distinct from p_db_mode
      then array[format('Queue mode differs: ''%s'' vs ''%s''', p_local_mode, p_db_mode)]
    else array(
      select format('Route of step ''%s'' differs: ''%s'' vs ''%s''', l->>'stepSlug',
                    l->>'queueName', d->>'queueName')
      from jsonb_array_elements(p_local_route) with ordinality as lx(l, n)
      join jsonb_array_elements(p_db_route) d on d->>'stepSlug' = l->>'stepSlug'
      where (l->>'queueName') is distinct from (d->>'queueName')
      order by lx.n)
  end
$$;
