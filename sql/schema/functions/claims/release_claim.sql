-- Gives back the tasks one claim_tasks call started for `worker_id` under `claim_id`, when the
-- worker never received that call's reply (its connection broke after the claim committed):
-- each task still started under that claim is queued again as if the claim had not happened
-- (the attempt it counted is taken back) and its message is visible at once (with the queue's
-- announcement), so the work goes on now rather than after stall recovery (step timeout +
-- 30 s). Tasks that have moved on since (completed, cancelled, claimed again) are left alone,
-- and calling it again, or for a claim that never committed, returns 0. Returns how many tasks
-- were given back.
-- The lost claim may not have ended yet, or not even begun: its query can still be on its way
-- to a server backend, or running there. So the claim id is first recorded as released in the
-- worker's claim fence (pgflow.claim_fences, since 0030) under that row's lock: a claim still
-- running holds it FOR KEY SHARE, so this waits for it to commit or roll back and then gives
-- back what it started; a claim that begins later finds its id released and claims nothing.
-- Before 0030 a claim that committed after its release kept its tasks until stall recovery. A
-- worker therefore uses a new claim id for every try of a claim, and bounds this wait with
-- lock_timeout (a claim can run long: 55P03, try again later). Needs READ COMMITTED (a snapshot
-- taken before the wait would not see the claim's tasks: 25000).
-- Locks: the worker's claim fence FOR UPDATE -> runs FOR UPDATE in run_id order (_lock_runs)
-- -> tasks -> messages, never waited for.
create or replace function pgflow.release_claim(worker_id uuid, claim_id uuid) returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_runs uuid[];
  v_task record;
  v_count int := 0;
begin
  if release_claim.worker_id is null or release_claim.claim_id is null then
    raise exception 'release_claim(): worker_id and claim_id must not be NULL'
      using errcode = 'null_value_not_allowed';
  end if;
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception 'release_claim() needs READ COMMITTED, not %: a snapshot taken before it waits for the claim would not see the claim''s tasks',
      upper(current_setting('transaction_isolation')) using errcode = 'invalid_transaction_state';
  end if;
  -- The claim's end, then its id released, before its tasks are looked for. (A worker that
  -- registered while 0030 was migrating has no fence: it gets one here.)
  insert into pgflow.claim_fences (worker_id)
  select w.worker_id from pgflow.workers w where w.worker_id = release_claim.worker_id
  on conflict do nothing;
  perform 1 from pgflow.claim_fences f where f.worker_id = release_claim.worker_id for update;
  if not found then
    return 0;  -- an unregistered worker: claim_tasks refuses its claims
  end if;
  update pgflow.claim_fences f
  set released_claim_ids =  -- the last 100
    (array_remove(f.released_claim_ids, release_claim.claim_id) || release_claim.claim_id)
    [greatest(cardinality(array_remove(f.released_claim_ids, release_claim.claim_id)) - 98, 1):]
  where f.worker_id = release_claim.worker_id;
  select array_agg(distinct t.run_id order by t.run_id) into v_runs
  from pgflow.step_tasks t
  where t.last_worker_id = release_claim.worker_id and t.status = 'started'
    and t.last_claim_id = release_claim.claim_id;
  if v_runs is null then
    return 0;
  end if;
  perform pgflow._lock_runs(v_runs);
  for v_task in
    update pgflow.step_tasks t
    set status = 'queued', started_at = null, attempts_count = t.attempts_count - 1,
        last_claim_id = null
    where t.run_id = any(v_runs) and t.last_worker_id = release_claim.worker_id
      and t.status = 'started' and t.last_claim_id = release_claim.claim_id
    returning t.run_id, t.step_slug, t.task_index
  loop
    perform pgflow._set_task_message_vt(v_task.run_id, v_task.step_slug, v_task.task_index, 0);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- SECURITY DEFINER: the worker role writes tasks only through the worker API
-- (docs/security.md); nobody calls it unless granted (sql/contrib/grants.sql grants it to
-- pgflow_worker).
revoke execute on function pgflow.release_claim(uuid, uuid) from public;
