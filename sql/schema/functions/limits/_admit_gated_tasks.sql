-- Concurrency limits at work: one deferred constraint trigger on step_tasks,
-- gated_tasks_admitted, whose WHEN clause lets through only rows a limit applies to (gate is
-- not NULL), so unlimited flows pay nothing:
--   * its condition (_note_gated_task) matches a task queued held (_enqueue_step_tasks touches
--     one new task of a limited step for it: an insert trigger would cost every start;
--     resume_run's update queues it again) or an admitted task that ended. It records the
--     task's flow for this transaction (_transaction_record) — and, for a held task with a
--     concurrency key (since 0019), its step and key value, which the admission activates —
--     and is true only for the first such row of a flow, so one
--     event per flow is queued, not one per task (a 10,000-element map queues one);
--   * at commit each queued event runs _admit_gated_tasks, the first of which admits every
--     recorded flow, in byte order of slugs (_admit_tasks), and clears the record; the others
--     find it empty. Admitting at commit, not per row, is what makes the lock order hold: a
--     statement touches tasks in plan order, a commit locks gate rows sorted.
-- (A CASE, not AND: for a row without a gate the test is NULL, and NULL AND f() still calls f.)
-- A rolled-back subtransaction takes both its events and its part of the record with it.
-- Outside READ COMMITTED the commit admits nothing (its snapshot could miss a newer admission
-- and over-admit): the next admission of the flow does, at the latest stall recovery's sweep
-- (_admit_waiting_tasks, which also activates the key values of the tasks such a commit queued).
-- A caller that makes the constraint immediate (SET CONSTRAINTS ALL IMMEDIATE) admits after
-- each statement instead, in that statement's order of flows, and holds the gate rows until it
-- ends: still correct, but it holds up every commit of those flows meanwhile, and two such
-- transactions can deadlock (40P01, retried like any deadlock).
-- _admit_gated_tasks is SECURITY DEFINER: at commit it runs outside the pgflow function that
-- changed the task, as the session's role, which may not write tasks or queues itself.
-- Called by: the trigger below.

-- What this transaction recorded in a setting: the setting holds "<transaction id>:<value>",
-- so a value set for the session or by another transaction (SET, ALTER ROLE ... SET) reads as
-- NULL instead of hiding a flow from admission. The settings: pgflow.gated_flows (text[] of
-- flows to admit) and, since 0019, pgflow.gated_keys (jsonb [[flow, step, key], ...]: the key
-- values of held tasks queued, to activate).
create or replace function pgflow._transaction_record(p_setting text)
returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v text := coalesce(current_setting(p_setting, true), '');
begin
  if split_part(v, ':', 1) = pg_current_xact_id()::text then
    return substr(v, strpos(v, ':') + 1);
  end if;
  return null;
end;
$$;

create or replace function pgflow._note_gated_task(p_flow_slug text, p_step_slug text, p_key text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flows text[] := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  v_keys jsonb;
  v_entry jsonb := jsonb_build_array(jsonb_build_array(p_flow_slug, p_step_slug, p_key));
begin
  if p_key is not null then
    v_keys := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
    if not exists (select 1 from jsonb_array_elements(v_keys) e where e = v_entry->0) then
      perform set_config('pgflow.gated_keys', pg_current_xact_id()::text || ':' || (v_keys || v_entry)::text, true);
    end if;
  end if;
  if p_flow_slug = any(v_flows) then
    return false;
  end if;
  perform set_config('pgflow.gated_flows',
                     pg_current_xact_id()::text || ':' || array_append(v_flows, p_flow_slug)::text, true);
  return true;
end;
$$;

create or replace function pgflow._admit_gated_tasks()
returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  -- (Since 0028 through the helper wake_waiting_tasks also calls before its commit.)
  perform pgflow._admit_recorded_flows(true);
  return null;
end;
$$;

revoke execute on function pgflow._admit_gated_tasks() from public;

create constraint trigger gated_tasks_admitted after update of status, message_id on pgflow.step_tasks
  deferrable initially deferred
  for each row
  when (case when new.gate = 'held' and new.status = 'queued'
                   or new.gate = 'admitted' and new.status not in ('queued', 'started')
              then pgflow._note_gated_task(new.flow_slug, new.step_slug,
                                           case when new.gate = 'held' then new.concurrency_key end)
              else false end)
  execute function pgflow._admit_gated_tasks();
