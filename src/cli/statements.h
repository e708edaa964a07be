// Every statement the `pgflow` program sends, by name (the commands in *_commands.cc use them;
// nothing splices SQL text). Queries return one JSON document (query_json).
#ifndef PGFLOW_CLI_STATEMENTS_H_
#define PGFLOW_CLI_STATEMENTS_H_

namespace pgflow::cli {

// ---- sessions ----

// Times in UTC: human output prints them with a Z.
inline constexpr char kUtc[] = "set timezone = 'UTC'";
// Audits and dry runs change nothing, and say so to the server.
inline constexpr char kBeginReadOnly[] = "begin read only";
inline constexpr char kTransactionReadOnly[] = "set transaction read only";

// ---- flows (flow_commands.cc) ----

// Every flow with its alias, queue mode, step count, runs by status and route: the queue of
// every step and its live workers.
inline constexpr char kFlowsQuery[] = R"sql(
select coalesce(jsonb_agg(jsonb_build_object(
  'flow_slug', f.flow_slug,
  'flow_alias', f.flow_alias,
  'active', exists (select 1 from pgflow.flow_aliases a
                    where a.flow_alias = f.flow_alias and a.flow_slug = f.flow_slug),
  'queue_mode', f.queue_mode,
  'step_count', (select count(*) from pgflow.steps s where s.flow_slug = f.flow_slug),
  'runs', (select jsonb_build_object('started', count(*) filter (where r.status = 'started'),
                                     'completed', count(*) filter (where r.status = 'completed'),
                                     'failed', count(*) filter (where r.status = 'failed'))
           from pgflow.runs r where r.flow_slug = f.flow_slug),
  'routes', (select coalesce(jsonb_agg(jsonb_build_object(
                      'step_slug', s.step_slug, 'queue_name', s.queue_name,
                      'live_workers', (select count(*) from pgflow.workers w
                                       where w.queue_name = s.queue_name and pgflow.is_live_worker(w)))
                    order by s.step_index), '[]'::jsonb)
             from pgflow.steps s where s.flow_slug = f.flow_slug))
  order by f.flow_slug), '[]'::jsonb)::text
from pgflow.flows f
)sql";

// One flow's definition. `$1` is a flow slug, or an alias (its active version).
inline constexpr char kFlowQuery[] = R"sql(
with chosen as (
  select f.* from pgflow.flows f
  where f.flow_slug = coalesce((select fl.flow_slug from pgflow.flows fl where fl.flow_slug = $1),
                               (select a.flow_slug from pgflow.flow_aliases a where a.flow_alias = $1))
)
select coalesce((select jsonb_build_object(
  'flow_slug', f.flow_slug,
  'flow_alias', f.flow_alias,
  'active', exists (select 1 from pgflow.flow_aliases a
                    where a.flow_alias = f.flow_alias and a.flow_slug = f.flow_slug),
  'queue_mode', f.queue_mode,
  'created_at', f.created_at,
  'options', jsonb_build_object('max_attempts', f.opt_max_attempts, 'base_delay', f.opt_base_delay,
                                'timeout', f.opt_timeout),
  'steps', (select coalesce(jsonb_agg(jsonb_build_object(
              'step_slug', s.step_slug,
              'step_type', s.step_type,
              'step_index', s.step_index,
              'queue_name', s.queue_name,
              'dependencies', (select coalesce(jsonb_agg(d.dep_slug order by ds.step_index), '[]'::jsonb)
                               from pgflow.deps d
                               join pgflow.steps ds on ds.flow_slug = d.flow_slug and ds.step_slug = d.dep_slug
                               where d.flow_slug = s.flow_slug and d.step_slug = s.step_slug),
              'options', jsonb_build_object('max_attempts', s.opt_max_attempts, 'base_delay', s.opt_base_delay,
                                            'timeout', s.opt_timeout, 'start_delay', s.opt_start_delay),
              'required_input_pattern', s.required_input_pattern,
              'forbidden_input_pattern', s.forbidden_input_pattern,
              'when_unmet', s.when_unmet,
              'when_exhausted', s.when_exhausted) order by s.step_index), '[]'::jsonb)
            from pgflow.steps s where s.flow_slug = f.flow_slug))
  from chosen f), 'null'::jsonb)::text
)sql";

// ---- runs (run_commands.cc) ----

// Runs, newest first: {"runs": [...], "limit": $4, "truncated": whether more matched}. $1 flow
// slug or alias, $2 status (or "cancelled"), $3 started since, $4 limit.
inline constexpr char kRunsQuery[] = R"sql(
select jsonb_build_object(
  'runs', coalesce(jsonb_agg(jsonb_build_object(
            'run_id', r.run_id, 'flow_slug', r.flow_slug, 'flow_alias', r.flow_alias, 'status', r.status,
            'cancelled', r.cancelled_at is not null,
            'started_at', r.started_at, 'ended_at', coalesce(r.completed_at, r.failed_at),
            'steps_total', (select count(*) from pgflow.step_states s where s.run_id = r.run_id),
            'steps_remaining', r.remaining_steps) order by r.started_at desc, r.run_id)
          filter (where r.n <= $4::int), '[]'::jsonb),
  'limit', $4::int,
  'truncated', count(*) > $4::int)::text
from (select r.*, f.flow_alias, row_number() over (order by r.started_at desc, r.run_id) as n
      from pgflow.runs r
      left join pgflow.flows f on f.flow_slug = r.flow_slug
      where ($1::text is null or r.flow_slug = $1
             or r.flow_slug in (select f2.flow_slug from pgflow.flows f2 where f2.flow_alias = $1))
        and ($2::text is null
             -- (a cancelled run is failed with cancelled_at, shown as "cancelled")
             or case when r.cancelled_at is not null then 'cancelled' else r.status end = $2
             or ($2 = 'failed' and r.status = 'failed'))
        and ($3::timestamptz is null or r.started_at >= $3::timestamptz)
      order by r.started_at desc, r.run_id
      limit $4::int + 1) r
)sql";

// One run and its steps: status, attempts, timings, errors, map progress, waits (schema 0021:
// steps.wait and step_tasks.wake_at; against an older schema `pgflow run show` fails).
inline constexpr char kRunQuery[] = R"sql(
select coalesce((select jsonb_build_object(
  'run_id', r.run_id, 'flow_slug', r.flow_slug, 'status', r.status,
  'cancelled', r.cancelled_at is not null, 'cancel_reason', r.cancel_reason,
  'restart_of_run_id', r.restart_of_run_id,
  'started_at', r.started_at, 'completed_at', r.completed_at, 'failed_at', r.failed_at,
  'cancelled_at', r.cancelled_at, 'remaining_steps', r.remaining_steps,
  'input', r.input, 'output', r.output,
  'steps', (select coalesce(jsonb_agg(jsonb_build_object(
              'step_slug', ss.step_slug, 'step_type', st.step_type, 'status', ss.status,
              'started_at', ss.started_at, 'completed_at', ss.completed_at, 'failed_at', ss.failed_at,
              'skipped_at', ss.skipped_at, 'skip_reason', ss.skip_reason, 'error_message', ss.error_message,
              'tasks_total', ss.initial_tasks, 'tasks_completed', t.completed, 'tasks_failed', t.failed,
              'tasks_cancelled', t.cancelled, 'tasks_waiting', t.waiting, 'wakes_at', t.wakes_at,
              'waits_for', st.wait->>'kind',
              'attempts', t.attempts, 'last_task_error', t.last_error) order by st.step_index), '[]'::jsonb)
            from pgflow.step_states ss
            join pgflow.steps st on st.flow_slug = ss.flow_slug and st.step_slug = ss.step_slug
            cross join lateral (
              select count(*) filter (where tk.status = 'completed') as completed,
                     count(*) filter (where tk.status = 'failed') as failed,
                     count(*) filter (where tk.status = 'cancelled') as cancelled,
                     count(*) filter (where tk.status = 'waiting') as waiting,
                     min(tk.wake_at) filter (where tk.status = 'waiting') as wakes_at,
                     max(tk.attempts_count) as attempts,
                     (array_agg(tk.error_message order by coalesce(tk.failed_at, tk.started_at, tk.queued_at) desc)
                        filter (where tk.error_message is not null))[1] as last_error
              from pgflow.step_tasks tk where tk.run_id = ss.run_id and tk.step_slug = ss.step_slug) t
            where ss.run_id = r.run_id))
  from pgflow.runs r where r.run_id = $1::uuid), 'null'::jsonb)::text
)sql";

// ---- workers (worker_commands.cc) ----

// Worker functions and workers. A worker is alive while pgflow.is_live_worker (heartbeats
// within 30 s); a silent one that has not stopped is unresponsive. $1: include stopped ones.
inline constexpr char kWorkersQuery[] = R"sql(
select jsonb_build_object(
  'functions', (select coalesce(jsonb_agg(jsonb_build_object(
                  'function_name', wf.function_name, 'paused', wf.paused_at is not null,
                  'paused_at', wf.paused_at, 'pause_reason', wf.pause_reason,
                  'live_workers', (select count(*) from pgflow.workers w
                                   where w.function_name = wf.function_name and pgflow.is_live_worker(w)))
                  order by wf.function_name), '[]'::jsonb)
                from pgflow.worker_functions wf),
  'workers', (select coalesce(jsonb_agg(jsonb_build_object(
                'worker_id', w.worker_id, 'function_name', w.function_name, 'queue_name', w.queue_name,
                'serves', (select coalesce(jsonb_agg(distinct case when f.queue_mode = 'step'
                                                                 then s.flow_slug || '.' || s.step_slug
                                                                 else s.flow_slug end), '[]'::jsonb)
                           from pgflow.steps s join pgflow.flows f on f.flow_slug = s.flow_slug
                           where s.queue_name = w.queue_name),
                'state', case when w.stopped_at is not null then 'stopped'
                              when w.deprecated_at is not null then 'deprecated'
                              when wf.paused_at is not null then 'paused'
                              when not pgflow.is_live_worker(w) then 'unresponsive'
                              else 'alive' end,
                'started_at', w.started_at, 'last_heartbeat_at', w.last_heartbeat_at,
                'heartbeat_age_seconds', round(extract(epoch from now() - w.last_heartbeat_at)::numeric, 3),
                'deprecated_at', w.deprecated_at, 'stopped_at', w.stopped_at)
                order by w.function_name, w.started_at, w.worker_id), '[]'::jsonb)
              from pgflow.workers w
              left join pgflow.worker_functions wf on wf.function_name = w.function_name
              where $1::boolean or w.stopped_at is null))::text
)sql";

// Pauses worker function $1 with reason $2: the same one-way pause a fatal claim sets
// (docs/worker.md); no row when the function does not exist.
inline constexpr char kPauseWorkerFunction[] =
    "select pgflow._pause_worker_function(wf.function_name, $2) from pgflow.worker_functions wf "
    "where wf.function_name = $1";
inline constexpr char kResumeWorkerFunction[] = "select pgflow.resume_worker_function($1)";

// Deprecates worker $1 (an id), or every running worker of function $1: each stops claiming at
// its next heartbeat. Says whether $1 names anything, and which workers it deprecated.
inline constexpr char kDeprecateWorkers[] = R"sql(
with target as (
  select w.worker_id from pgflow.workers w
  where (w.worker_id::text = lower($1) or w.function_name = $1) and w.stopped_at is null
), marked as (
  update pgflow.workers w set deprecated_at = now()
  from target t where w.worker_id = t.worker_id and w.deprecated_at is null
  returning w.worker_id
)
select jsonb_build_object(
  'known', exists (select 1 from pgflow.workers w where w.worker_id::text = lower($1) or w.function_name = $1)
           or exists (select 1 from pgflow.worker_functions wf where wf.function_name = $1),
  'deprecated', (select coalesce(jsonb_agg(m.worker_id order by m.worker_id), '[]'::jsonb) from marked m))::text
)sql";

// ---- status and audit (schema_commands.cc) ----

// Per flow: tasks waiting and in flight, the age of the oldest waiting one, runs by status, and
// started runs set aside by the timers (pgflow.timer_retries, schema 0028 and later) whose
// timers are still due: stuck ones (a row outlives a run that went on otherwise). Counted through
// query_to_xml, so the query still plans on an older schema; 0 without the table, null for a
// role that may not read it.
inline constexpr char kMetricsQuery[] = R"sql(
select coalesce(jsonb_agg(jsonb_build_object(
  'flow_slug', f.flow_slug,
  'queued_tasks', t.queued,
  'started_tasks', t.started,
  'oldest_queued_age_seconds', t.oldest_queued_age_seconds,
  'runs', jsonb_build_object('started', r.started, 'completed', r.completed, 'failed', r.failed),
  'timer_retries',
    case when to_regclass('pgflow.timer_retries') is null then 0
         when not has_table_privilege('pgflow.timer_retries', 'select') then null
         else (xpath('/row/n/text()', query_to_xml(format(
                 'select count(*) as n from pgflow.timer_retries x join pgflow.runs ru '
                 'on ru.run_id = x.run_id where ru.flow_slug = %L and ru.status = ''started'' '
                 'and exists (select 1 from pgflow.step_tasks t where t.run_id = x.run_id '
                 'and t.status = ''waiting'' and t.wake_at <= now())',
                 f.flow_slug), false, true, '')))[1]::text::bigint end)
  order by f.flow_slug), '[]'::jsonb)::text
from pgflow.flows f
cross join lateral (
  select count(*) filter (where st.status = 'queued') as queued,
         count(*) filter (where st.status = 'started') as started,
         round(extract(epoch from now() - min(st.queued_at) filter (where st.status = 'queued'))::numeric, 3)
           as oldest_queued_age_seconds
  from pgflow.step_tasks st
  -- (an OR, not IN: each arm matches one partial index, idx_step_tasks_queued / _started)
  where st.flow_slug = f.flow_slug and (st.status = 'queued' or st.status = 'started')) t
cross join lateral (
  select count(*) filter (where ru.status = 'started') as started,
         count(*) filter (where ru.status = 'completed') as completed,
         count(*) filter (where ru.status = 'failed') as failed
  from pgflow.runs ru where ru.flow_slug = f.flow_slug) r
)sql";

// ---- prune (prune_command.cc) ----

inline constexpr char kPruneHelperInstalled[] =
    "select to_regprocedure('pgflow.prune_data_older_than(interval)') is not null";
inline constexpr char kPrune[] = "select pgflow.prune_data_older_than($1::interval)";
// What prune_data_older_than($1) deletes, counted with the same predicates (cutoff: now() - $1;
// now() is the transaction's start, so the counts and the deletion agree). Archived messages
// are counted per queue on a flow route through query_to_xml, keeping this one read-only SELECT.
inline constexpr char kPruneCounts[] = R"sql(
with cutoff as (select now() - $1::interval as at),
old_runs as (
  select r.run_id from pgflow.runs r, cutoff c where pgflow.run_ended_before(r, c.at))
select jsonb_build_object(
  'older_than', $1::interval::text,
  'cutoff', (select at from cutoff),
  'runs', (select count(*) from old_runs),
  'step_states', (select count(*) from pgflow.step_states s join old_runs o using (run_id)),
  'step_tasks', (select count(*) from pgflow.step_tasks t join old_runs o using (run_id)),
  'workers', (select count(*) from pgflow.workers w, cutoff c
              where w.last_heartbeat_at < c.at and w.last_heartbeat_at < now() - interval '30 seconds'),
  'archived_messages', (select coalesce(sum((xpath('/row/n/text()', query_to_xml(
                            format('select count(*) as n from pgmq.%I where archived_at < %L',
                                   pgmq.format_table_name(q.queue_name, 'a'), c.at),
                            false, true, '')))[1]::text::bigint), 0)
                        from (select distinct s.queue_name from pgflow.steps s) q, cutoff c))::text
)sql";

}  // namespace pgflow::cli

#endif  // PGFLOW_CLI_STATEMENTS_H_
