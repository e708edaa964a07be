-- Deletes a flow with all its runs and its private queues, in one transaction: the alias rules
-- first, then _delete_flow_contents (seed 000's steps 1-4), then the flow row last (step 5).
-- Alias rules (seed 004): an inactive version can be deleted; the active version of an alias
-- that has other members cannot (activate another version first); the sole version of an
-- alias is deleted together with the alias. Destructive: for operators and development.
-- Locks: alias lock -> definition lock -> flow row -> alias row -> runs -> queues.
-- Called by: operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_active text;
  v_members text[];
begin
  -- An existing flow's alias is immutable, so it can be read before its lock.
  select * into v_flow from pgflow.flows f where f.flow_slug = p_flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  perform pgflow._lock_flow_alias(v_flow.flow_alias);
  perform pgflow._lock_flow_definition(p_flow_slug);
  select a.flow_slug into v_active from pgflow.flow_aliases a
  where a.flow_alias = v_flow.flow_alias for update;
  if v_active = p_flow_slug then
    v_members := array(select f.flow_slug from pgflow.flows f
                       where f.flow_alias = v_flow.flow_alias and f.flow_slug <> p_flow_slug
                       order by f.flow_slug);
    if cardinality(v_members) > 0 then
      raise exception 'Flow "%" is the active version of alias "%", which has other versions (%); activate one of them first (pgflow.activate_flow_version), then delete this one',
        p_flow_slug, v_flow.flow_alias, array_to_string(v_members, ', ')
        using errcode = 'object_in_use';
    end if;
  end if;

  perform pgflow._delete_flow_contents(p_flow_slug);
  if v_active = p_flow_slug then
    delete from pgflow.flow_aliases a where a.flow_alias = v_flow.flow_alias;  -- its sole version
  end if;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
end;
$$;
