-- Human-readable differences between a worker's flow-control options and the persisted ones,
-- worker first, both in _normalize_flow_control's spelling: the flow's limit, then each step
-- whose limit differs (in byte order of slugs).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_control(p_local jsonb, p_db jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select array(
    select d from (
      select 0 as k, '' as slug,
             format('Concurrency limit of the flow differs: %s vs %s',
                    coalesce(p_local->>'concurrencyLimit', 'none'), coalesce(p_db->>'concurrencyLimit', 'none')) as d
      where (p_local->'concurrencyLimit') is distinct from (p_db->'concurrencyLimit')
      union all
      select 1, s.slug,
             format('Concurrency limit of step ''%s'' differs: %s vs %s', s.slug,
                    coalesce(p_local#>>array['steps', s.slug, 'concurrencyLimit'], 'none'),
                    coalesce(p_db#>>array['steps', s.slug, 'concurrencyLimit'], 'none'))
      from (select jsonb_object_keys(coalesce(p_local->'steps', '{}')) as slug
            union
            select jsonb_object_keys(coalesce(p_db->'steps', '{}'))) s
      where (p_local#>array['steps', s.slug]) is distinct from (p_db#>array['steps', s.slug])
    ) x
    order by x.k, x.slug collate "C")
$$;
