-- Reports a handler failure: retry with backoff while attempts remain (base_delay *
-- 2^attempts seconds), otherwise apply the step's when_exhausted mode.
-- Locks: see _fail_task.
-- Called by: workers (the reporter); SQL users.
create or replace function pgflow.fail_task(run_id uuid, step_slug text, task_index int, error_message text)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select * from pgflow._fail_task(run_id, step_slug, task_index, error_message, false);
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.fail_task(uuid, text, int, text) from public;
