-- Sets a run's priority (default 0; higher first, any int): the order in which the held tasks
-- of limited flows are admitted (docs/flow-control.md, "Priorities"). It applies to the run's
-- waiting tasks at once and to every task the run queues later; a retry (retry_run) keeps it.
-- In the transaction that starts the run it is a start option: the run's first tasks are
-- admitted at that commit, already in its order. Tasks of flows without a limit are admitted
-- when queued, so a priority does not reorder them. Returns nothing; an unknown run is P0002.
-- SECURITY DEFINER: only granted roles may call it.
-- Locks: the run FOR UPDATE (the same lock its steps are started under) -> its priority row ->
-- its tasks.
-- Called by: Client::set_run_priority / Transaction::set_run_priority, `pgflow start
-- --priority`, `pgflow run priority`; SQL users.
create or replace function pgflow.set_run_priority(run_id uuid, priority int) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if set_run_priority.priority is null then
    raise exception 'set_run_priority(): priority must not be NULL (0 is the default)'
      using errcode = 'null_value_not_allowed';
  end if;
  perform pgflow._lock_run_for_control(set_run_priority.run_id);
  perform pgflow._set_run_priority(set_run_priority.run_id, set_run_priority.priority);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.set_run_priority(uuid, int) from public;

-- The body of set_run_priority, for a run the caller holds: its row of run_priorities (none
-- for 0) and the priority of its tasks a limit applies to.
-- Called by: set_run_priority, retry_run (the new run takes the old one's).
create or replace function pgflow._set_run_priority(p_run_id uuid, p_priority int) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_priority = 0 then
    delete from pgflow.run_priorities rp where rp.run_id = p_run_id;
  else
    insert into pgflow.run_priorities (run_id, priority) values (p_run_id, p_priority)
    on conflict (run_id) do update set priority = excluded.priority;
  end if;
  update pgflow.step_tasks t set priority = p_priority
  where t.run_id = p_run_id and t.gate is not null and t.priority is distinct from p_priority;
end;
$$;
