-- Creates only the flow definition (no queue: the compiler and add_step provision it).
-- Idempotent for an existing flow, whose options stay unchanged. Rejects invalid and too long
-- slugs, case-only duplicates of another flow, and a slug whose queue name PGMQ already has.
-- Locks: the flow's definition lock.
-- Called by: _create_flow_from_shape; SQL users building a flow by hand.
create or replace function pgflow.create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null
) returns pgflow.flows
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_problem text := pgflow._slug_problem(create_flow.flow_slug);
  v_other text;
begin
  perform pgflow._lock_flow_definition(create_flow.flow_slug);
  select * into v_flow from pgflow.flows f where f.flow_slug = create_flow.flow_slug;
  if found then
    return v_flow;
  end if;

  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', create_flow.flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(create_flow.flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      create_flow.flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  select f.flow_slug into v_other from pgflow.flows f
  where lower(f.flow_slug) = lower(create_flow.flow_slug);
  if found then
    raise exception 'Flow slug "%" differs only in case from existing flow "%"; flow slugs must be unique ignoring case',
      create_flow.flow_slug, v_other using errcode = 'unique_violation';
  end if;
  select m.queue_name into v_other from pgmq.meta m
  where lower(m.queue_name) = lower(create_flow.flow_slug);
  if found then
    raise exception 'PGMQ queue "%" already exists; pgflow never adopts an existing queue for a new flow "%". Drop or rename that queue, or use another flow slug',
      v_other, create_flow.flow_slug using errcode = 'duplicate_object';
  end if;

  insert into pgflow.flows (flow_slug, opt_max_attempts, opt_base_delay, opt_timeout)
  values (create_flow.flow_slug, coalesce(max_attempts, 3), coalesce(base_delay, 5),
          coalesce(timeout, 60))
  returning * into v_flow;
  return v_flow;
end;
$$;
