-- Human-readable differences between a worker's flow-control options and the persisted ones,
-- worker first, both in _normalize_flow_control's spelling: the flow's limit and key, then each
-- step's (in byte order of slugs).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_control(p_local jsonb, p_db jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select array(
    select format('%s of %s differs: %s vs %s', o.label,
                  case when x.slug is null then 'the flow' else format('step ''%s''', x.slug) end,
                  coalesce(x.local_options->>o.name, 'none'), coalesce(x.db_options->>o.name, 'none'))
    from (select null::text as slug, p_local as local_options, p_db as db_options
          union all
          select s.slug, p_local#>array['steps', s.slug], p_db#>array['steps', s.slug]
          from (select jsonb_object_keys(coalesce(p_local->'steps', '{}')) as slug
                union
                select jsonb_object_keys(coalesce(p_db->'steps', '{}'))) s) x
    cross join (values (1, 'concurrencyLimit', 'Concurrency limit'),
                       (2, 'concurrencyKey', 'Concurrency key')) o(k, name, label)
    where (x.local_options->o.name) is distinct from (x.db_options->o.name)
    order by x.slug collate "C" nulls first, o.k)
$$;
