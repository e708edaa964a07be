-- Reports a batch of handler failures in one call (the worker's reporter): `results` is a
-- JSON array of {"run_id", "step_slug", "task_index", "error_message"}, each with an optional
-- "permanent": true (since schema 0014, worker protocol 6) for a failure no retry can fix (a
-- conversion failure, or a handler's pgflow::permanent status): that attempt is the task's
-- last, whatever attempts remain, and its error message gets " (permanent: not retried)".
-- Every run of the batch is locked first, in run_id order; then each failure is applied
-- exactly as fail_task applies it, in (run_id, step_slug, task_index) order. Failures are rare
-- next to completions, so this saves round trips, not per-task work. Returns the row
-- fail_task returns for each. A "permanent" that is neither a JSON boolean nor null (null:
-- false) is an error (22023) naming the result, and changes nothing.
-- Locks: runs FOR UPDATE in run_id order, then as _fail_task for each result.
-- Called by: workers (the reporter, protocol 5 and 6); SQL users.
create or replace function pgflow.fail_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
declare
  v_run_ids uuid[];
  v_steps text[];
  v_indexes int[];
  v_errors text[];
  v_permanent boolean[];
  v_bad bigint;
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value #>> '{}' order by r.n),
         array_agg(coalesce((results -> (r.pos - 1)::int -> 'permanent') = 'true'::jsonb, false) order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'permanent') not in ('boolean', 'null'))
  into v_run_ids, v_steps, v_indexes, v_errors, v_permanent, v_bad
  from pgflow._task_results(results, 'fail_tasks', 'error_message') with ordinality r(run_id, step_slug, task_index, value, pos, n);
  if v_bad is not null then
    raise exception 'fail_tasks(): result %: "permanent" must be true or false', v_bad
      using errcode = 'invalid_parameter_value';
  end if;

  perform pgflow._lock_runs(v_run_ids);
  for i in 1 .. cardinality(v_run_ids) loop
    return query select * from pgflow._fail_task(
      v_run_ids[i], v_steps[i], v_indexes[i],
      case when v_permanent[i] then coalesce(v_errors[i], 'failed') || ' (permanent: not retried)' else v_errors[i] end,
      v_permanent[i]);
  end loop;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.fail_tasks(jsonb) from public;
