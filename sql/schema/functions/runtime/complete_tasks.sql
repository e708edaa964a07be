-- Reports a batch of task results in one call (the worker's reporter). `results` is a JSON
-- array of {"run_id", "step_slug", "task_index", "output"}. Each result ends exactly as
-- complete_task would leave it if the results were applied one by one in (run_id, step_slug,
-- task_index) order; returns the row complete_task returns for each (in no particular order).
--
-- Set-based where that cannot change an outcome: a run all of whose results complete tasks
-- of one step (one-step runs, the tasks of one map: the usual batch) is handled together with
-- every other such run: one UPDATE of their tasks, one decrement per step state, and for the
-- steps whose last task this was, one statement each to complete them, release their children
-- and count down their runs; runs left without steps complete in one UPDATE, the others go
-- through _advance_run. Runs whose results complete nothing (late or stale results) need no
-- order either. Messages are archived with one pgmq.archive per queue, last. Any other run
-- (completing results for several steps or next to results that do not complete, the same
-- task twice, a single step's non-array output that may be a type violation) goes through
-- complete_task result by result: there one result can change what the next one does (a run
-- failed by a condition cancels the tasks after it).
-- Locks: runs FOR UPDATE in run_id order (_lock_runs) -> step states -> tasks -> messages last,
-- never waited for (_archive_messages skips one a reader holds; its claim archives it).
-- Called by: workers (the reporter, protocol 5); SQL users.
create or replace function pgflow.complete_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
set enable_hashjoin = off  -- its joins with the batch probe keys, never scan a table
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_run_ids uuid[];
  v_steps text[];
  v_indexes int[];
  v_outputs jsonb[];
  v_kinds text[];
  v_finished_runs uuid[];  -- steps completed here, one per run at most (by run_id)
  v_finished_flows text[];
  v_finished_steps text[];
  v_finished_items int[];  -- each one's output's array length (NULL: not an array)
  v_advance uuid[];
  v_completed_runs uuid[];  -- runs completed here (by run_id)
  v_completed_flows text[];
  v_queues text[];
  v_message_ids bigint[];
begin
  -- One result: complete_task is the same thing, without the batch machinery (a sorted set
  -- and arrays of results, which copy the output at every statement that reads them). Any
  -- other batch, and anything that is not an array, is checked once, by _task_results.
  if jsonb_typeof(results) = 'array' and jsonb_array_length(results) = 1 then
    perform pgflow._check_task_results(results, 'complete_tasks', 'output');
    return query
    select * from pgflow.complete_task((results #>> '{0,run_id}')::uuid, results #>> '{0,step_slug}',
                                       (results #>> '{0,task_index}')::int, results #> '{0,output}');
    return;
  end if;
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value order by r.n)
  into v_run_ids, v_steps, v_indexes, v_outputs
  from pgflow._task_results(results, 'complete_tasks', 'output') with ordinality
       r(run_id, step_slug, task_index, value, pos, n);
  perform pgflow._lock_runs(v_run_ids);

  -- Classify every result (under the run locks, so nothing changes underneath):
  --   missing    no such task: nothing to do, nothing returned
  --   late       the run or the step ended: unchanged, message archived
  --   unchanged  the task is not started (queued, completed, failed, ...): unchanged
  --   complete   completes, set-based
  --   one_by_one through complete_task: its run has the same task twice, a possible type
  --              violation, or completing results for several steps or next to results
  --              that do not complete
  select array_agg(k.kind order by k.n)
  into v_kinds
  from (
    select case when bool_or(k.duplicate or k.maybe_violation) over w
                  or (bool_or(k.completes) over w
                      and (not bool_and(k.completes) over w
                           or min(k.step_slug) over w <> max(k.step_slug) over w)) then 'one_by_one'
                when k.task_status is null then 'missing'
                when k.run_status <> 'started' or k.state_status <> 'started' then 'late'
                when not k.completes then 'unchanged'
                else 'complete' end as kind,
           k.n
    from (
      select b.run_id, b.step_slug, b.n, r.status as run_status, ss.status as state_status,
             t.status as task_status,
             count(*) over (partition by b.run_id, b.step_slug, b.task_index) > 1 as duplicate,
             coalesce(r.status = 'started' and ss.status = 'started' and t.status = 'started',
                      false) as completes,
             coalesce(r.status = 'started' and ss.status = 'started' and t.status = 'started'
                      and s.step_type = 'single'
                      and (b.output is null or jsonb_typeof(b.output) <> 'array')
                      and exists (select 1
                                  from pgflow.deps d
                                  join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
                                  join pgflow.step_states c on c.run_id = b.run_id and c.step_slug = d.step_slug
                                  where d.flow_slug = r.flow_slug and d.dep_slug = b.step_slug
                                    and cs.step_type = 'map' and c.status = 'created'
                                    and c.initial_tasks is null),
                      false) as maybe_violation
      from unnest(v_run_ids, v_steps, v_indexes, v_outputs) with ordinality
           b(run_id, step_slug, task_index, output, n)
      left join lateral (select r.status, r.flow_slug from pgflow.runs r
                         where r.run_id = b.run_id) r on true
      left join lateral (select ss.status from pgflow.step_states ss
                         where ss.run_id = b.run_id and ss.step_slug = b.step_slug) ss on true
      left join lateral (select t.status from pgflow.step_tasks t
                         where t.run_id = b.run_id and t.step_slug = b.step_slug
                           and t.task_index = b.task_index) t on true
      left join lateral (select s.step_type from pgflow.steps s
                         where s.flow_slug = r.flow_slug and s.step_slug = b.step_slug) s on true
    ) k
    window w as (partition by k.run_id)
  ) k;

  -- Runs that need the one-by-one path.
  for i in 1 .. cardinality(v_run_ids) loop
    if v_kinds[i] = 'one_by_one' then
      return query select * from pgflow.complete_task(v_run_ids[i], v_steps[i], v_indexes[i], v_outputs[i]);
    end if;
  end loop;

  -- Set-based completion: step states locked before their tasks (the lock order), then the
  -- tasks, then the step states counted down; a step whose count reaches 0 completes (a map's
  -- output is every task output in task_index order, read after the tasks were updated).
  perform 1
  from pgflow.step_states ss
  join (select distinct b.run_id, b.step_slug
        from unnest(v_run_ids, v_steps, v_kinds) b(run_id, step_slug, kind)
        where b.kind = 'complete') b on ss.run_id = b.run_id and ss.step_slug = b.step_slug
  order by ss.run_id, ss.step_slug
  for update of ss;

  return query
  update pgflow.step_tasks t
  set status = 'completed', completed_at = greatest(now(), t.started_at, t.queued_at), output = b.output
  from unnest(v_run_ids, v_steps, v_indexes, v_outputs, v_kinds) b(run_id, step_slug, task_index, output, kind)
  where b.kind = 'complete' and t.run_id = b.run_id and t.step_slug = b.step_slug
    and t.task_index = b.task_index
  returning t.*;

  with counted as (
    update pgflow.step_states ss
    set remaining_tasks = ss.remaining_tasks - b.n,
        status = case when ss.remaining_tasks = b.n then 'completed' else ss.status end,
        completed_at = case when ss.remaining_tasks = b.n then greatest(now(), ss.started_at) else ss.completed_at end,
        output = case when ss.remaining_tasks <> b.n then ss.output
                      when s.step_type = 'map'
                        then (select coalesce(jsonb_agg(t.output order by t.task_index), '[]'::jsonb)
                              from pgflow.step_tasks t
                              where t.run_id = ss.run_id and t.step_slug = ss.step_slug
                                and t.status = 'completed')
                      else b.output end
    from (select b.run_id, b.step_slug, count(*)::int as n, (array_agg(b.output))[1] as output
          from unnest(v_run_ids, v_steps, v_outputs, v_kinds) b(run_id, step_slug, output, kind)
          where b.kind = 'complete'
          group by b.run_id, b.step_slug) b,
         pgflow.steps s
    where ss.run_id = b.run_id and ss.step_slug = b.step_slug
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    returning ss.run_id, ss.flow_slug, ss.step_slug, ss.status,
              case when jsonb_typeof(ss.output) = 'array' then jsonb_array_length(ss.output) end
                as items)
  -- (keys, not rows: a step state's output can be large, and an array of rows copies it at
  -- every statement that reads the array)
  select array_agg(c.run_id order by c.run_id), array_agg(c.flow_slug order by c.run_id),
         array_agg(c.step_slug order by c.run_id), array_agg(c.items order by c.run_id)
  into v_finished_runs, v_finished_flows, v_finished_steps, v_finished_items
  from counted c
  where c.status = 'completed';

  if v_finished_runs is not null then
    -- Children of the completed steps lose a pending dependency (as _release_children; at
    -- most one completed step per run here); a map child learns its task count.
    update pgflow.step_states c
    set remaining_deps = c.remaining_deps - 1,
        initial_tasks = case when cs.step_type = 'map' then f.items else c.initial_tasks end
    from unnest(v_finished_runs, v_finished_flows, v_finished_steps, v_finished_items)
         f(run_id, flow_slug, step_slug, items)
    join pgflow.deps d on d.flow_slug = f.flow_slug and d.dep_slug = f.step_slug
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    where c.run_id = f.run_id and c.step_slug = d.step_slug and c.status = 'created';

    with counted as (
      update pgflow.runs r set remaining_steps = r.remaining_steps - 1
      from unnest(v_finished_runs) f(run_id)
      where r.run_id = f.run_id
      returning r.run_id, r.remaining_steps)
    select array_agg(c.run_id order by c.run_id) filter (where c.remaining_steps > 0)
    into v_advance
    from counted c;

    -- Runs without steps left complete (maybe_complete_run for all of them at once), and the
    -- batch's events go out in one call (the steps', then the runs'); the others move on.
    with done as (
      update pgflow.runs r
      set status = 'completed', completed_at = greatest(now(), r.started_at), output = pgflow._run_output(r.run_id)
      from unnest(v_finished_runs) f(run_id)
      where r.run_id = f.run_id and r.status = 'started' and r.remaining_steps = 0
      returning r.run_id, r.flow_slug)
    select coalesce(array_agg(d.run_id order by d.run_id), '{}'),
           coalesce(array_agg(d.flow_slug order by d.run_id), '{}')
    into v_completed_runs, v_completed_flows
    from done d;
    perform pgflow._emit_events(
      v_finished_runs || v_completed_runs, v_finished_flows || v_completed_flows,
      v_finished_steps || array_fill(null::text, array[cardinality(v_completed_runs)]),
      array_fill('completed'::text, array[cardinality(v_finished_runs) + cardinality(v_completed_runs)]));
    if v_advance is not null then
      for i in 1 .. cardinality(v_advance) loop
        perform pgflow._advance_run(v_advance[i]);
      end loop;
    end if;
  end if;

  -- Late results and results that change nothing are returned as they are.
  return query
  select t.*
  from unnest(v_run_ids, v_steps, v_indexes, v_kinds) b(run_id, step_slug, task_index, kind)
  join pgflow.step_tasks t
    on t.run_id = b.run_id and t.step_slug = b.step_slug and t.task_index = b.task_index
  where b.kind in ('late', 'unchanged');

  -- Messages last: completed and late tasks' messages, one archive per queue.
  select array_agg(t.queue_name), array_agg(t.message_id)
  into v_queues, v_message_ids
  from unnest(v_run_ids, v_steps, v_indexes, v_kinds) b(run_id, step_slug, task_index, kind)
  join pgflow.step_tasks t
    on t.run_id = b.run_id and t.step_slug = b.step_slug and t.task_index = b.task_index
  where b.kind in ('complete', 'late');
  perform pgflow._archive_messages(v_queues, v_message_ids);
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.complete_tasks(jsonb) from public;
