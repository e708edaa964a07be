-- Validates, and when absent creates, the generated queue of a plain flow: lower(flow_slug).
--
-- Ownership is derived from the persisted definition, never from a registry: the flow owns
-- its generated queue when one of its steps already routes to it, or when the queue was
-- created in the transaction that persisted the flow (same pgmq.meta.created_at as
-- flows.created_at, i.e. by the compiler or by this function). Anything else holding that
-- name is a collision: pgflow never adopts a queue it did not create.
--
-- Whether another flow's tasks sit in the queue is asked only while the flow does not route to
-- it yet (creating it; since 0029): step_tasks has no index for the question, so at every
-- worker start's verification it read the whole task history under the definition lock. A
-- queue the flow already routes to passed that check when it was created, and since then no
-- other flow could route to it (their creation checks this flow's steps).
-- Locks: the caller holds the flow's definition lock and the flow row exists; pgmq.create.
-- Only flows in queue mode `flow` have this queue.
-- Called by: _add_step (so add_step and add_wait_step), _create_flow_from_shape,
-- ensure_flow_compiled.
create or replace function pgflow._provision_flow_queue(p_flow_slug text) returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text := lower(p_flow_slug);
  v_flow pgflow.flows;
  v_meta record;
  v_matches int;
  v_routed boolean;  -- some step of the flow routes to the queue already
begin
  select * into strict v_flow from pgflow.flows f where f.flow_slug = p_flow_slug;
  v_routed := exists (select 1 from pgflow.steps s where s.flow_slug = p_flow_slug and s.queue_name = v_queue);
  if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
     or not v_routed
        and exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
    raise exception 'Queue "%" of flow "%" is already used by another flow', v_queue, p_flow_slug
      using errcode = 'unique_violation';
  end if;

  select count(*) into v_matches from pgmq.meta m where lower(m.queue_name) = v_queue;
  if v_matches > 0 then
    perform pgflow._queue_meta_name(v_queue);  -- exactly one row and both tables, or an error
    select m.* into v_meta from pgmq.meta m where lower(m.queue_name) = v_queue;
    if v_routed or v_meta.created_at = v_flow.created_at then
      return v_queue;
    end if;
    raise exception 'PGMQ queue "%" already exists but flow "%" did not create it; pgflow never adopts an existing queue. Drop or rename that queue, or use another flow slug',
      v_meta.queue_name, p_flow_slug
      using errcode = 'duplicate_object';
  end if;

  if to_regclass(format('pgmq.%I', 'q_' || v_queue)) is not null
     or to_regclass(format('pgmq.%I', 'a_' || v_queue)) is not null then
    raise exception 'PGMQ tables pgmq.q_% / pgmq.a_% exist without a pgmq.meta row; refusing to reuse them',
      v_queue, v_queue using errcode = 'duplicate_object';
  end if;
  -- Steps already route to the queue but it is gone: a recreated queue would restart message
  -- ids under the existing task snapshots (queue_name, message_id). Never recreate silently.
  if v_routed then
    raise exception 'PGMQ queue "%" of flow "%" is missing although its steps route to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or use another flow slug',
      v_queue, p_flow_slug using errcode = 'undefined_object';
  end if;

  perform pgflow._create_queue(v_queue);
  return v_queue;
end;
$$;
