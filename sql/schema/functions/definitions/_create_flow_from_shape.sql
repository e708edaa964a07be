-- The complete compiler: preflight the whole definition (and, in queue mode `step`, every
-- private queue) before anything is written, persist the flow with its queue mode as a member
-- of `p_flow_alias` (NULL: its own slug), provision its queues - the generated queue
-- lower(flow_slug) in mode `flow` (even for a flow without steps), exactly the step queues and
-- no default queue in mode `step` - then create the steps with their route.
-- A flow row that exists already is a local recompilation (ensure_flow_compiled emptied it with
-- _delete_flow_contents): its identity and alias membership are kept, its options and queue
-- mode replaced.
-- Locks: the caller holds the alias lock and the flow's definition lock (_create_flow and
-- _add_step take them again).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb,
                                                          p_queue_mode text default 'flow',
                                                          p_flow_alias text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_step jsonb;
  v_route text[];
  v_queue text;
  i int := 0;
begin
  perform pgflow._preflight_flow_shape(p_flow_slug, p_shape, p_queue_mode);
  v_route := array(select r.queue_name from pgflow._flow_route(p_flow_slug, p_shape, p_queue_mode) r
                   order by r.step_index);
  if p_queue_mode = 'step' then
    perform pgflow._preflight_step_queues(p_flow_slug, v_route);
  end if;
  if exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug) then
    -- Recompiling: the same identity, the new definition's options (created_at: the queues of
    -- this definition are created now, see _provision_flow_queue).
    update pgflow.flows f
    set opt_max_attempts = coalesce((p_shape->'options'->>'maxAttempts')::int, 3),
        opt_base_delay = coalesce((p_shape->'options'->>'baseDelay')::int, 5),
        opt_timeout = coalesce((p_shape->'options'->>'timeout')::int, 60),
        created_at = now()
    where f.flow_slug = p_flow_slug;
  else
    perform pgflow._create_flow(
      p_flow_slug,
      (p_shape->'options'->>'maxAttempts')::int,
      (p_shape->'options'->>'baseDelay')::int,
      (p_shape->'options'->>'timeout')::int,
      p_flow_alias);
  end if;
  update pgflow.flows f set queue_mode = p_queue_mode
  where f.flow_slug = p_flow_slug and f.queue_mode <> p_queue_mode;
  if p_queue_mode = 'step' then
    foreach v_queue in array v_route loop
      perform pgflow._create_queue(v_queue);
    end loop;
  else
    perform pgflow._provision_flow_queue(p_flow_slug);
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    i := i + 1;
    perform pgflow._add_step(
      flow_slug => p_flow_slug,
      step_slug => v_step->>'slug',
      deps_slugs => array(select jsonb_array_elements_text(v_step->'dependencies')),
      max_attempts => (v_step->'options'->>'maxAttempts')::int,
      base_delay => (v_step->'options'->>'baseDelay')::int,
      timeout => (v_step->'options'->>'timeout')::int,
      start_delay => (v_step->'options'->>'startDelay')::int,
      step_type => v_step->>'stepType',
      required_input_pattern => case when (v_step->'requiredInputPattern'->>'defined')::boolean
        then v_step->'requiredInputPattern'->'value' end,
      forbidden_input_pattern => case when (v_step->'forbiddenInputPattern'->>'defined')::boolean
        then v_step->'forbiddenInputPattern'->'value' end,
      when_unmet => coalesce(v_step->>'whenUnmet', 'skip'),
      when_exhausted => coalesce(v_step->>'whenExhausted', 'fail'),
      queue_name => case when p_queue_mode = 'step' then v_route[i] end,
      wait => v_step->'wait');
  end loop;
end;
$$;
