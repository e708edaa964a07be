-- The 0.16.0 claim signature, kept for SQL callers: claims from the flow's canonical default
-- queue through claim_tasks and returns the claimed tasks.
-- Called by: SQL users and upstream tooling.
create or replace function pgflow.start_tasks(flow_slug text, msg_ids bigint[], worker_id uuid)
returns setof pgflow.step_task_record
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
  select c.flow_slug, c.run_id, c.step_slug, c.input, c.msg_id, c.task_index, c.flow_input
  from pgflow.claim_tasks(lower(start_tasks.flow_slug), start_tasks.flow_slug,
                          start_tasks.msg_ids, start_tasks.worker_id) c
  where c.outcome = 'claimed'
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.start_tasks(text, bigint[], uuid) from public;
