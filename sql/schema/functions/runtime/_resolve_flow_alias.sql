-- The active concrete version of an alias, or an error naming the alias (P0002): a missing
-- alias never falls back to a flow of that slug. The hint points at near misses: an alias that
-- differs only in case, or a flow with that slug under another alias.
-- Locks: none (reads the committed pointer; activate_flow_version swaps it atomically).
-- Called by: start_flow (and so start_flow_by_alias), start_flow_with_states, start_run,
-- start_run_idempotent.
create or replace function pgflow._resolve_flow_alias(p_flow_alias text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_slug text;
  v_near text;
begin
  select a.flow_slug into v_slug from pgflow.flow_aliases a where a.flow_alias = p_flow_alias;
  if found then
    return v_slug;
  end if;
  select coalesce(
           (select format('alias "%s" differs only in case', a.flow_alias) from pgflow.flow_aliases a
            where lower(a.flow_alias) = lower(p_flow_alias)),
           (select format('flow "%s" exists under alias "%s": start it by slug (start_flow_by_slug) or by that alias',
                          f.flow_slug, f.flow_alias)
            from pgflow.flows f where f.flow_slug = p_flow_alias))
  into v_near;
  raise exception 'Flow alias "%" does not exist%', p_flow_alias, coalesce('; ' || v_near, '')
    using errcode = 'no_data_found';
end;
$$;
