-- Starts a run of the concrete flow `flow_slug` (a pinned version, whatever its alias's active
-- version is): checks the input (a flow with a root map needs an array), creates the run and one
-- step state per step (root steps already started, with their tasks and messages, when no root
-- step has a condition and no root map is empty), publishes run:started, then advances the run
-- (conditions, taskless steps, other ready steps get their tasks and messages; a run without
-- tasks completes at once) unless its root steps were created started (nothing else can be
-- ready then).
-- Locks: the new run's rows only (nobody else can see them before commit); queue rows last.
-- Called by: start_flow (after resolving the alias), start_flow_with_states_by_slug (and so
-- Client::start_flow_by_slug), start_run_by_slug, _start_run_idempotent, retry_run; SQL users.
create or replace function pgflow.start_flow_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step_count int;
  v_has_root_map boolean;
  v_has_root_condition boolean;
  v_roots_start boolean;
  v_step record;
  v_waits boolean := false;
begin
  -- The flow's steps in one read (since 0015); the flow itself only when it has none.
  select count(*),
         coalesce(bool_or(s.deps_count = 0 and s.step_type = 'map'), false),
         coalesce(bool_or(s.deps_count = 0 and (s.required_input_pattern is not null
                                                or s.forbidden_input_pattern is not null)), false)
  into v_step_count, v_has_root_map, v_has_root_condition
  from pgflow.steps s
  where s.flow_slug = start_flow_by_slug.flow_slug;
  if v_step_count = 0
     and not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow_by_slug.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow_by_slug.flow_slug using errcode = 'no_data_found';
  end if;
  if v_has_root_map and start_flow_by_slug.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow_by_slug.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow_by_slug.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow_by_slug.flow_slug, jsonb_typeof(start_flow_by_slug.input);
  elsif start_flow_by_slug.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  -- A caller's own run id (an idempotent start, retry_run's new_run_id) may be taken: say so
  -- instead of the primary key's error. (Only then: the usual start pays no extra probe.)
  if start_flow_by_slug.run_id is not null then
    select * into v_run from pgflow.runs r where r.run_id = start_flow_by_slug.run_id;
    if found then
      raise exception 'Run id % is taken: a run of flow "%" started with it at %; start with another id, or read that run (a repeated start finds its first)',
        v_run.run_id, v_run.flow_slug, v_run.started_at
        using errcode = 'unique_violation';
    end if;
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow_by_slug.run_id, pgflow._new_run_id()), start_flow_by_slug.flow_slug, start_flow_by_slug.input,
          v_step_count)
  returning * into v_run;

  -- In the common case — no root step has a condition and no root map is empty — nothing can
  -- happen at start before the root steps start, so they are created started: what
  -- start_ready_steps would do next, without updating rows this statement inserts (which would
  -- run their foreign-key checks again). Otherwise (a condition may skip steps or fail the run;
  -- an empty root map completes at once and may make other steps ready) every step is created
  -- and _advance_run starts what is ready, in its usual order.
  v_roots_start := not v_has_root_condition;
  if v_roots_start and v_has_root_map then
    v_roots_start := jsonb_array_length(start_flow_by_slug.input) > 0;  -- an array (checked above)
  end if;
  insert into pgflow.step_states (flow_slug, run_id, step_slug, remaining_deps, initial_tasks,
                                  status, started_at, remaining_tasks)
  select x.flow_slug, v_run.run_id, x.step_slug, x.deps_count, x.initial_tasks,
         case when x.starts then 'started' else 'created' end,
         case when x.starts then now() end,
         case when x.starts then x.initial_tasks end
  from (
    select s.flow_slug, s.step_slug, s.deps_count, t.initial_tasks,
           v_roots_start and s.deps_count = 0 as starts
    from pgflow.steps s
    cross join lateral (select
      -- (the inner CASE keeps constant folding from evaluating the length of a non-array)
      case when s.step_type = 'map' and s.deps_count = 0
             then jsonb_array_length(case when jsonb_typeof(v_run.input) = 'array' then v_run.input end)
           when s.step_type = 'map' then null
           else 1 end as initial_tasks) t
    where s.flow_slug = v_run.flow_slug) x;

  perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status);
  for v_step in
    select ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name,
           s.concurrency_limited, s.wait
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'started'
    order by ss.step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay,
                                       v_step.concurrency_limited, v_step.wait);
    v_waits := v_waits or v_step.wait is not null;
  end loop;
  -- A root wait step whose sleep is already over completes now (a new run has no signals).
  if v_waits then
    perform pgflow._settle_waits(v_run.run_id);
  end if;

  -- With its root steps started, a run with steps has nothing else ready and cannot be done
  -- (every other step waits for a dependency): _advance_run would find nothing to do.
  if not (v_roots_start and v_step_count > 0) then
    perform pgflow._advance_run(v_run.run_id);
  end if;
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;
