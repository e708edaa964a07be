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
-- Fencing (since 0027): a result may carry "claim_id", the claim_id of the claim_tasks call
-- that claimed the attempt that failed (a UUID string in the 8-4-4-4-12 hex form; JSON null is
-- the same as no claim_id; anything else is an error (22023) naming the result, and changes
-- nothing). When the task's step_tasks.last_claim_id is distinct from it, the report is from a
-- superseded attempt - resent or delivered late after stall recovery or release_claim queued
-- the task again and another claim took it - and changes nothing: the task's row is returned
-- as it is, as for a failure of a task that is not started. Without claim_id a failure applies
-- to whatever attempt is started, as before (upstream's fail_task has no fence).
-- Locks: runs FOR UPDATE in run_id order, then as _fail_task for each result (the fence reads
-- the task under its run's lock, which every change of a task holds or conflicts with).
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
  v_claims uuid[];
  v_bad bigint;
  v_bad_claim bigint;
  v_task pgflow.step_tasks;
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value #>> '{}' order by r.n),
         array_agg(coalesce((results -> (r.pos - 1)::int -> 'permanent') = 'true'::jsonb, false) order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'permanent') not in ('boolean', 'null')),
         array_agg(case when c.valid then c.claim::uuid end order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'claim_id') not in ('string', 'null')
                               or not c.valid)
  into v_run_ids, v_steps, v_indexes, v_errors, v_permanent, v_bad, v_claims, v_bad_claim
  from pgflow._task_results(results, 'fail_tasks', 'error_message') with ordinality r(run_id, step_slug, task_index, value, pos, n)
  cross join lateral (select x.claim,
                             x.claim ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$'
                      from (select case when jsonb_typeof(results -> (r.pos - 1)::int -> 'claim_id') = 'string'
                                        then results -> (r.pos - 1)::int ->> 'claim_id' end) x(claim)) c(claim, valid);
  if v_bad is not null then
    raise exception 'fail_tasks(): result %: "permanent" must be true or false', v_bad
      using errcode = 'invalid_parameter_value';
  end if;
  if v_bad_claim is not null then
    raise exception 'fail_tasks(): result %: "claim_id" must be a UUID string (the claim_id of claim_tasks) or null',
      v_bad_claim using errcode = 'invalid_parameter_value';
  end if;

  perform pgflow._lock_runs(v_run_ids);
  for i in 1 .. cardinality(v_run_ids) loop
    if v_claims[i] is not null then
      -- The fence: a report of another claim's attempt changes nothing.
      select * into v_task from pgflow.step_tasks t
      where t.run_id = v_run_ids[i] and t.step_slug = v_steps[i] and t.task_index = v_indexes[i];
      if found and v_task.last_claim_id is distinct from v_claims[i] then
        return next v_task;
        continue;
      end if;
    end if;
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
