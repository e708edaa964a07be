-- Makes `flow_slug` the active version of `flow_alias`, by compare-and-swap: only if the alias
-- still points to `expected_current_flow_slug` (NULL: only if the alias has no active version
-- yet). A conflict changes nothing and names the actual current version (SQLSTATE 55000), so a
-- rollout or a rollback never overwrites a change it did not see. The flow must be a member of
-- the alias. Returns the alias row.
-- Locks: the alias lock, the flow's definition lock, then the alias row; every wait is bounded
-- (_bound_lock_waits) and a timeout names the holder.
-- Called by: operators (pgflow activate, Client::activate_flow_version).
create or replace function pgflow.activate_flow_version(flow_alias text, flow_slug text,
                                                        expected_current_flow_slug text)
returns pgflow.flow_aliases
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_member text;
  v_current pgflow.flow_aliases;
  v_row pgflow.flow_aliases;
begin
  if activate_flow_version.flow_alias is null or activate_flow_version.flow_slug is null then
    raise exception 'activate_flow_version(): % must not be NULL',
      case when activate_flow_version.flow_alias is null then 'flow_alias' else 'flow_slug' end
      using errcode = 'null_value_not_allowed';
  end if;
  perform pgflow._lock_flow_alias(activate_flow_version.flow_alias);
  perform pgflow._lock_flow_definition(activate_flow_version.flow_slug);
  select f.flow_alias into v_member from pgflow.flows f where f.flow_slug = activate_flow_version.flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', activate_flow_version.flow_slug using errcode = 'no_data_found';
  elsif v_member <> activate_flow_version.flow_alias then
    raise exception 'Flow "%" is a version of alias "%", not of "%"', activate_flow_version.flow_slug,
      v_member, activate_flow_version.flow_alias using errcode = 'invalid_parameter_value';
  end if;

  select * into v_current from pgflow.flow_aliases a
  where a.flow_alias = activate_flow_version.flow_alias for update;
  if v_current.flow_slug is distinct from expected_current_flow_slug then
    raise exception 'Alias "%" %, but %; nothing changed (read the current version and decide again)',
      activate_flow_version.flow_alias,
      coalesce('points to "' || v_current.flow_slug || '"', 'has no active version'),
      coalesce('"' || expected_current_flow_slug || '" was expected', 'no active version was expected')
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  if v_current.flow_alias is null then
    insert into pgflow.flow_aliases (flow_alias, flow_slug)
    values (activate_flow_version.flow_alias, activate_flow_version.flow_slug)
    returning * into v_row;
  else
    update pgflow.flow_aliases a set flow_slug = activate_flow_version.flow_slug, updated_at = now()
    where a.flow_alias = activate_flow_version.flow_alias
    returning * into v_row;
  end if;
  perform set_config('lock_timeout', v_restore, true);
  return v_row;
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('the row of flow alias "%s"', activate_flow_version.flow_alias),
                                     null, 'pgflow.flow_aliases', v_since, v_error);
end;
$$;
