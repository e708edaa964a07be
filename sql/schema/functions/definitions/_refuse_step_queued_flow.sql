-- Refuses (0A000) to change a flow in queue mode `step` by hand: its workers compile it whole
-- (every step's private queue is provisioned with the definition), so `p_function` (add_step,
-- add_wait_step) would add a step without its queue.
-- Locks: none (the caller holds the flow's definition lock).
-- Called by: add_step, add_wait_step.
create or replace function pgflow._refuse_step_queued_flow(p_flow_slug text, p_function text)
returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  if exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug and f.queue_mode = 'step') then
    raise exception 'Flow "%" has one queue per step (queue mode step): its workers compile it whole, so % cannot change it. Deploy a new flow version instead',
      p_flow_slug, p_function using errcode = 'feature_not_supported';
  end if;
end;
$$;
