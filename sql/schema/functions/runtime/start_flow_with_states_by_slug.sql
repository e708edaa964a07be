-- start_flow_by_slug (a pinned concrete version), then the new run as get_run_with_states
-- returns it. SECURITY DEFINER, like start_flow_with_states: only granted roles may call it.
-- Called by: Client::start_flow_by_slug, start_flow_with_states (after resolving the alias).
create or replace function pgflow.start_flow_with_states_by_slug(flow_slug text, input jsonb,
                                                                 run_id uuid default null)
returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run_id uuid;
begin
  select r.run_id into v_run_id
  from pgflow.start_flow_by_slug(start_flow_with_states_by_slug.flow_slug, start_flow_with_states_by_slug.input,
                                 start_flow_with_states_by_slug.run_id) r;
  return pgflow.get_run_with_states(v_run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_flow_with_states_by_slug(text, jsonb, uuid) from public;
