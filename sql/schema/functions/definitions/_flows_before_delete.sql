-- Trigger on pgflow.flows, before a row is deleted: a raw `DELETE FROM pgflow.flows` (upstream's
-- test helpers and some scripts clear tables so, children first) works for a flow that is its
-- own alias and its alias's only version: the alias row goes with it, as
-- delete_flow_and_data does. A flow that is the active version of another alias, or of one
-- with other versions, is refused with an error naming delete_flow_and_data (which says what
-- to do first), instead of the foreign key's.
-- Called by: the trigger flows_delete_own_alias (DELETE on pgflow.flows).
create or replace function pgflow._flows_before_delete() returns trigger
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if old.flow_alias = old.flow_slug
     and not exists (select 1 from pgflow.flows f
                     where f.flow_alias = old.flow_alias and f.flow_slug <> old.flow_slug) then
    delete from pgflow.flow_aliases a where a.flow_alias = old.flow_alias and a.flow_slug = old.flow_slug;
  end if;
  if exists (select 1 from pgflow.flow_aliases a where a.flow_slug = old.flow_slug) then
    raise exception 'Flow "%" is the active version of alias "%"; delete it with pgflow.delete_flow_and_data(%), not DELETE FROM pgflow.flows',
      old.flow_slug, old.flow_alias, quote_literal(old.flow_slug)
      using errcode = 'foreign_key_violation';
  end if;
  return old;
end;
$$;

create trigger flows_delete_own_alias before delete on pgflow.flows
  for each row execute function pgflow._flows_before_delete();
