-- The complete compiler: preflight the whole definition, persist the flow, provision its
-- generated queue (even for a flow without steps), then create the steps with their route.
-- Locks: the caller holds the flow's definition lock (create_flow/add_step take it again).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_step jsonb;
begin
  perform pgflow._preflight_flow_shape(p_flow_slug, p_shape);
  perform pgflow.create_flow(
    p_flow_slug,
    (p_shape->'options'->>'maxAttempts')::int,
    (p_shape->'options'->>'baseDelay')::int,
    (p_shape->'options'->>'timeout')::int);
  perform pgflow._provision_flow_queue(p_flow_slug);
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    perform pgflow.add_step(
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
      when_exhausted => coalesce(v_step->>'whenExhausted', 'fail'));
  end loop;
end;
$$;
