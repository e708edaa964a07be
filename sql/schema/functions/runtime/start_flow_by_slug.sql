-- Starts a run of the concrete flow `flow_slug` (a pinned version, whatever its alias's active
-- version is): checks the input (a flow with a root map needs an array), creates the run and one
-- step state per step, publishes run:started, then advances the run (conditions, taskless
-- steps, ready steps get their tasks and messages; a run without tasks completes at once).
-- Locks: the new run's rows only (nobody else can see them before commit); queue rows last.
-- Called by: start_flow (after resolving the alias), start_flow_with_states_by_slug (and so
-- Client::start_flow_by_slug); SQL users.
create or replace function pgflow.start_flow_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = ''
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_has_root_map boolean;
begin
  if not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow_by_slug.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow_by_slug.flow_slug using errcode = 'no_data_found';
  end if;
  select exists (select 1 from pgflow.steps s
                 where s.flow_slug = start_flow_by_slug.flow_slug and s.step_type = 'map' and s.deps_count = 0)
  into v_has_root_map;
  if v_has_root_map and start_flow_by_slug.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow_by_slug.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow_by_slug.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow_by_slug.flow_slug, jsonb_typeof(start_flow_by_slug.input);
  elsif start_flow_by_slug.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow_by_slug.run_id, gen_random_uuid()), start_flow_by_slug.flow_slug, start_flow_by_slug.input,
          (select count(*) from pgflow.steps s where s.flow_slug = start_flow_by_slug.flow_slug))
  returning * into v_run;

  insert into pgflow.step_states (flow_slug, run_id, step_slug, remaining_deps, initial_tasks)
  select s.flow_slug, v_run.run_id, s.step_slug, s.deps_count,
         -- (the inner CASE keeps constant folding from evaluating the length of a non-array)
         case when s.step_type = 'map' and s.deps_count = 0
                then jsonb_array_length(case when jsonb_typeof(v_run.input) = 'array' then v_run.input end)
              when s.step_type = 'map' then null
              else 1 end
  from pgflow.steps s
  where s.flow_slug = v_run.flow_slug;

  perform pgflow._emit_run_event(v_run);

  perform pgflow._advance_run(v_run.run_id);
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;
