-- Deletes a flow with all its runs and its private queues, in one transaction: the alias rules
-- first, then _delete_flow_contents (seed 000's steps 1-4), then the flow row last (step 5).
-- Alias rules (seed 004): an inactive version can be deleted; the active version cannot while
-- its alias has other versions (activate another one first); the sole version of an alias is
-- deleted together with the alias - for a self-alias (a plain flow) by default, for a named
-- alias only with p_remove_alias => true, because callers start that alias. Destructive: for
-- operators and development.
-- Locks: alias lock -> definition lock -> alias row -> flow row -> runs -> queues; every wait
-- is bounded (_bound_lock_waits) and a timeout names the holder.
-- Called by: operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text, p_remove_alias boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_alias text;
  v_active text;
  v_members text[];
begin
  -- A flow's alias is immutable while the flow exists, so it can be read before the locks;
  -- read again under them in case the flow was deleted and created anew meanwhile.
  select f.flow_alias into v_alias from pgflow.flows f where f.flow_slug = p_flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  perform pgflow._lock_flow_alias(v_alias);
  perform pgflow._lock_flow_definition(p_flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug and f.flow_alias = v_alias) then
    raise exception 'Flow "%" was deleted or created anew while this deletion waited for it; try again', p_flow_slug
      using errcode = 'serialization_failure';
  end if;

  select a.flow_slug into v_active from pgflow.flow_aliases a where a.flow_alias = v_alias for update;
  if v_active = p_flow_slug then
    v_members := array(select f.flow_slug from pgflow.flows f
                       where f.flow_alias = v_alias and f.flow_slug <> p_flow_slug order by f.flow_slug);
    if cardinality(v_members) > 0 then
      raise exception 'Flow "%" is the active version of alias "%", which has other versions (%); activate one of them first (pgflow.activate_flow_version), then delete this one',
        p_flow_slug, v_alias, array_to_string(v_members, ', ') using errcode = 'object_in_use';
    elsif v_alias <> p_flow_slug and not coalesce(p_remove_alias, false) then
      raise exception 'Flow "%" is the only version of alias "%"; deleting it removes the alias, which callers start: pass p_remove_alias => true to do that',
        p_flow_slug, v_alias using errcode = 'object_in_use';
    end if;
  end if;

  perform pgflow._delete_flow_contents(p_flow_slug);
  if v_active = p_flow_slug then
    delete from pgflow.flow_aliases a where a.flow_alias = v_alias;  -- its sole version
  end if;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
  perform set_config('lock_timeout', v_restore, true);
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('a lock while deleting flow "%s"', p_flow_slug),
                                     null, null, v_since, v_error);
end;
$$;
