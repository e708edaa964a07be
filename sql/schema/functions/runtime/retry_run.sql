-- Starts a new run of a failed (or cancelled) run's concrete flow version with the same input,
-- linked to it by restart_of_run_id (and its priority, since 0018: set_run_priority), and
-- returns the new run's id. `new_run_id` (a UUID the
-- caller chooses) makes the call safe to repeat: a second retry with it fails with 23505
-- instead of starting twice. Refused (55000) for a run that is still started or completed; an
-- unknown run is P0002. The original run is left as it is. SECURITY DEFINER: only granted
-- roles may call it.
-- Locks: the original run FOR SHARE (it cannot be resumed meanwhile); then the new run's rows,
-- as start_flow_by_slug.
-- Called by: Client::retry_run, `pgflow run retry`; SQL users.
create or replace function pgflow.retry_run(run_id uuid, new_run_id uuid default null) returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_new uuid;
begin
  v_run := pgflow._lock_run_for_control(retry_run.run_id, 'retried', p_for_share => true);
  select r.run_id into v_new from pgflow.start_flow_by_slug(v_run.flow_slug, v_run.input, retry_run.new_run_id) r;
  update pgflow.runs r set restart_of_run_id = v_run.run_id where r.run_id = v_new;
  perform pgflow._set_run_priority(v_new, rp.priority)
  from pgflow.run_priorities rp where rp.run_id = v_run.run_id;
  return v_new;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.retry_run(uuid, uuid) from public;
