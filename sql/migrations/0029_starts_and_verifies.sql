-- pgflow SQL core, 0029: idempotent starts that do not return a run being pruned; worker
-- starts that do not read the task history.
--
-- * _start_run_idempotent: a repeat start read the key's run and returned it. A prune deleting
--   that run, not yet committed, was not waited for: the start returned a run that was gone a
--   moment later, and created none. A repeat that finds its key row being deleted (its xmax
--   set) now waits for the deleter through the insert of the key, whose unique check waits for
--   it: if the deletion commits, the freed key is taken and a run created; if it rolls back,
--   the run is returned. Under REPEATABLE READ or SERIALIZABLE a deletion committed after the
--   snapshot is a serialization failure (40001); before, the old run was returned there too.
--   A repeat still takes no lock (a lock held to the caller's commit would meet prunes and run
--   control in the opposite order); it does not wait for a deletion that begins after its read.
-- * _verify_step_queues and _provision_flow_queue: every worker start's verification asked
--   whether another flow's tasks sat in the flow's queues, which step_tasks has no index for: it
--   read the whole task history (kept until pruning) once per queue while holding the flow's
--   alias and definition locks, so a fleet starting together queued behind it. That question is
--   now asked only where a flow does not route to the queue yet (its creation, and a flow
--   without steps); a queue it already routes to passed it then, and no other flow could route
--   to it since (their creation checks this flow's steps, through an index).
--
-- Data: none. Locks: none beyond replacing three functions. Applied by the pgflow migration
-- runner in one transaction. Immutable once released.

set local check_function_bodies = off;

-- ---- sql/schema/functions/queues/_provision_flow_queue.sql
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

-- ---- sql/schema/functions/queues/_verify_step_queues.sql
-- Verifies the private queues of an existing step-queued flow: every queue on its persisted
-- route exists exactly once in pgmq.meta (no case aliases) with both tables, and no other flow
-- routes to it. An owned queue that has gone missing is an error, never
-- recreated: a new queue would restart message ids under existing task snapshots.
-- Other flows' tasks in its queues are not looked for (since 0029): step_tasks has no index for
-- that, so every worker start read the whole task history under the definition lock. The flow's
-- creation checked them (_preflight_step_queues), and since then no other flow could route to
-- its queues (their creation checks this flow's steps).
-- Locks: none (reads); the caller holds the flow's definition lock.
-- Called by: ensure_flow_compiled (verification).
create or replace function pgflow._verify_step_queues(p_flow_slug text) returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_route record;
begin
  for v_route in select s.step_slug, s.queue_name from pgflow.steps s
                 where s.flow_slug = p_flow_slug order by s.step_index loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_route.queue_name and s.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of step "%" of flow "%" is also used by another flow',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'unique_violation';
    end if;
    if not exists (select 1 from pgmq.meta m where lower(m.queue_name) = v_route.queue_name) then
      raise exception 'PGMQ queue "%" of step "%" of flow "%" is missing although the step routes to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or deploy the flow under a new slug',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'undefined_object';
    end if;
    perform pgflow._queue_meta_name(v_route.queue_name);  -- exactly one row and both tables
  end loop;
end;
$$;

-- ---- sql/schema/functions/runtime/_start_run_idempotent.sql
-- The body of start_run_idempotent and start_run_idempotent_by_slug: starts a run of the
-- concrete flow `p_flow_slug` unless the flow's alias already has a run for `p_idempotency_key`;
-- returns the run's id and whether this call created it.
--
-- Concurrency: the key row is inserted before the run (the foreign key is checked at commit).
-- Checks: the flow, then the key, then (start_flow_by_slug) the input.
-- A second start with the same key blocks on the first's uncommitted index entry
-- (INSERT ... ON CONFLICT DO NOTHING waits for it), then finds the first's run if that
-- committed, or creates its own if it rolled back. Under READ COMMITTED that read sees the
-- committed row; under REPEATABLE READ or SERIALIZABLE a conflict with a row the snapshot cannot
-- see is a serialization failure (40001), which the caller retries like any other.
-- A repeat whose key row a transaction is deleting when it reads it (a prune of its run, not
-- yet committed; since 0029) waits for that transaction the same way, through the insert, whose
-- unique check waits for a deleter in progress: if the deletion commits, the insert takes the
-- freed key and the run is created; if it rolls back, the next read returns the run. Before,
-- such a repeat returned the run being deleted. Under REPEATABLE READ or SERIALIZABLE a
-- deletion that committed after the snapshot is a serialization failure (40001), as a key
-- inserted after it is: the snapshot still holds the old row. A deletion that begins after the
-- read is not waited for: a repeat takes no lock (one held to the caller's commit would meet
-- prunes and run control in the opposite order).
-- Locks: the key's index entry, then those of start_flow_by_slug (the new run's rows; queue rows
-- last). Nothing on a repeat, which waits only for a deleter of its key row as above (a caller
-- holding a lock on a run that the same prune deletes can then deadlock with it: 40P01). The
-- wait for another transaction's uncommitted key is bounded only by the caller's lock_timeout; a
-- caller whose transaction starts several keys, or holds run locks, should take keys in one
-- order.
-- Called by: start_run_idempotent (after resolving the alias), start_run_idempotent_by_slug.
create or replace function pgflow._start_run_idempotent(p_flow_slug text, p_input jsonb, p_idempotency_key text,
                                                        out run_id uuid, out created boolean)
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_alias text;
  v_run_id uuid;
  v_xmax xid;
  v_tried_insert boolean := false;
begin
  select f.flow_alias into v_alias from pgflow.flows f where f.flow_slug = p_flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  if p_idempotency_key is null or length(p_idempotency_key) not between 1 and 255 then
    raise exception 'Idempotency key must be 1 to 255 characters (got %)',
      coalesce(length(p_idempotency_key) || ' characters', 'NULL')
      using errcode = 'invalid_parameter_value';
  end if;

  -- A repeat finds the key's run by a read. Otherwise the insert decides: if another start
  -- with this key commits between the read and the insert, the insert does nothing and the
  -- next read finds that start's run. (A run pruned in between freed the key: try again.)
  for i in 1..3 loop
    select k.run_id, k.xmax into v_run_id, v_xmax
    from pgflow.run_idempotency_keys k
    where k.flow_alias = v_alias and k.idempotency_key = p_idempotency_key;
    -- A set xmax: a deletion (in progress, rolled back, or committed after this snapshot) or a
    -- row lock (pgflow takes none on key rows). The insert below waits for a deletion in
    -- progress; after one insert, what the read finds is the answer.
    if found and (v_xmax = '0'::xid or v_tried_insert) then
      run_id := v_run_id;
      created := false;
      return;
    end if;
    -- The key row names its run before the run exists: its foreign key is checked at commit,
    -- also when the caller's transaction made constraints immediate (SET CONSTRAINTS ALL
    -- IMMEDIATE; this resets only this constraint, for the rest of the transaction).
    set constraints pgflow.run_idempotency_keys_run_id_fkey deferred;
    v_run_id := pgflow._new_run_id();
    insert into pgflow.run_idempotency_keys (flow_alias, idempotency_key, run_id)
    values (v_alias, p_idempotency_key, v_run_id)
    on conflict (flow_alias, idempotency_key) do nothing;
    if found then
      if v_xmax <> '0'::xid and current_setting('transaction_isolation') <> 'read committed' then
        -- The row read was deleted by a transaction this snapshot cannot see: this snapshot
        -- would still find it, beside the new key.
        raise exception 'The run of an idempotency key of alias "%" was deleted after this transaction''s snapshot; try again',
          v_alias using errcode = 'serialization_failure';
      end if;
      perform pgflow.start_flow_by_slug(p_flow_slug, p_input, v_run_id);
      run_id := v_run_id;
      created := true;
      return;
    end if;
    v_tried_insert := true;
  end loop;
  -- (The key is not in the message: it is the caller's data, and server logs keep errors.)
  raise exception 'An idempotency key of alias "%" changed hands three times during one start; try again',
    v_alias using errcode = 'serialization_failure';
end;
$$;
