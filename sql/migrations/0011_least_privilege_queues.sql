-- pgflow SQL core, 0011: least privilege with the PGMQ extension; a pause a worker cannot undo.
--
--   * _create_queue is SECURITY DEFINER (EXECUTE revoked from PUBLIC): a worker compiling a new
--     flow creates its queues with the rights of schema pgflow's owner, the role that ran
--     `pgflow migrate`. Workers need no CREATE on schema pgmq, and with the pgmq extension
--     (whose queue tables become members of the extension, which only its owner may change)
--     they no longer have to be the extension's owner. It creates only queues named after an
--     existing flow (lower(flow_slug), or a step queue lower(flow_slug) || '__' || ...).
--   * _pause_worker_function (new, SECURITY DEFINER, EXECUTE revoked from PUBLIC): the pause a
--     fatal claim sets. The worker role needs no UPDATE on worker_functions.paused_at any more,
--     so it cannot lift a pause; resume_worker_function stays the operator's.
--   sql/contrib/grants.sql grants pgflow_worker EXECUTE on both and revokes the column
--   privileges the pause used to need; run it again after this migration.
--   * register_worker: the resume command in a paused function's error quotes the function
--     name (quote_literal), so it can be pasted whatever the name holds.
--
-- Only functions change: no table is touched and no lock is taken beyond those of
-- CREATE OR REPLACE FUNCTION. Applied by the pgflow migration runner in one transaction.
-- Immutable once released.

set local check_function_bodies = off;
-- ---- sql/schema/functions/queues/_create_queue.sql
-- Creates a generated queue for the definition this transaction persists, and makes sure this
-- transaction created it. pgmq.create() is idempotent, so a queue someone else created
-- meanwhile (its pgmq.meta row carries another transaction's start time) or an alias row for
-- the same tables is refused, never adopted.
-- SECURITY DEFINER: queues are created by, and owned by, the owner of schema pgflow (the role
-- that ran `pgflow migrate`), never by the worker compiling a flow - a worker needs no CREATE on
-- schema pgmq, and with the pgmq extension only the extension's owner can add queue tables to
-- it. Only queue names pgflow derives from an existing flow (lower(flow_slug), or a step queue
-- lower(flow_slug) || '__' || ...) are created, so EXECUTE (granted to pgflow_worker by
-- sql/contrib/grants.sql) is no power to make other queues.
-- Locks: pgmq.meta and the queue's new tables (pgmq.create). The caller holds the flow's
-- definition lock and has checked that nothing holds the name.
-- Called by: _provision_flow_queue, _create_flow_from_shape (step queues).
create or replace function pgflow._create_queue(p_queue_name text) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
begin
  if not exists (select 1 from pgflow.flows f
                 where p_queue_name = lower(f.flow_slug)
                    or starts_with(p_queue_name, lower(f.flow_slug) || '__')) then
    raise exception 'PGMQ queue "%" is not the queue of a pgflow flow; pgflow creates only its flows'' queues', p_queue_name
      using errcode = 'insufficient_privilege';
  end if;
  begin
    perform pgmq.create(p_queue_name);
  exception when unique_violation then
    -- Another session created the same tables and committed while this one waited for them.
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
  end;
  if (select count(*) from pgmq.meta m where lower(m.queue_name) = p_queue_name) <> 1
     or not exists (select 1 from pgmq.meta m
                    where m.queue_name = p_queue_name and m.created_at = now()) then
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
  end if;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker role what it needs).
revoke execute on function pgflow._create_queue(text) from public;

-- ---- sql/schema/functions/claims/_refuse_claim_batch.sql
-- The fatal outcome of a claim: every message of the batch is made visible again, the worker's
-- function is paused (pgflow.worker_functions; resume_worker_function lifts it), and one row per
-- message is returned: `fatal` with the reason for each unsupported message, `reset` for the
-- others. Nothing is claimed or archived, and nothing is raised, so the reset and the pause
-- commit with the claim's transaction.
-- Locks: the queue rows of the batch; the worker_functions row (_pause_worker_function).
-- Called by: claim_tasks.
create or replace function pgflow._refuse_claim_batch(p_queue_name text, p_function_name text,
                                                      p_items pgflow._claim_item[])
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow.set_vt_batch(p_queue_name, array(select c.msg_id from unnest(p_items) c order by c.msg_id),
                              array_fill(0, array[cardinality(p_items)]));
  perform pgflow._pause_worker_function(p_function_name,
    format('fatal claim on queue "%s": unsupported message(s) %s', p_queue_name,
           (select string_agg(c.msg_id::text, ', ' order by c.msg_id)
            from unnest(p_items) c where c.class = 'fatal')));
  return query
  select case when c.class = 'fatal' then 'fatal' else 'reset' end, p_queue_name, c.msg_id,
         null::text, null::uuid, null::text, null::int, null::int, null::jsonb, null::jsonb,
         c.reason, null::int
  from unnest(p_items) c order by c.msg_id;
end;
$$;

-- ---- sql/schema/functions/workers/_pause_worker_function.sql
-- Pauses a worker function: its workers stop claiming (claim_tasks) and new ones are refused at
-- registration (register_worker) until an operator runs resume_worker_function.
-- One way on purpose: SECURITY DEFINER, so the worker role needs no UPDATE on paused_at or
-- pause_reason (sql/contrib/grants.sql grants it EXECUTE on this function only) and a worker
-- that paused its function cannot lift the pause itself. A pause already in place gets the
-- newer reason and time.
-- Locks: the worker_functions row.
-- Called by: _refuse_claim_batch.
create or replace function pgflow._pause_worker_function(p_function_name text, p_reason text)
returns void
language sql volatile security definer
set search_path = ''
as $$
  update pgflow.worker_functions w
  set paused_at = clock_timestamp(), pause_reason = p_reason, updated_at = clock_timestamp()
  where w.function_name = p_function_name
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker role what it needs).
revoke execute on function pgflow._pause_worker_function(text, text) from public;

-- ---- sql/schema/functions/workers/register_worker.sql
-- Registers a worker of this database's protocol for one flow on one queue, after
-- compilation: the flow's queue in queue mode `flow`, one step's private queue in mode `step`
-- (the worker row records that queue; its claims name the step). Refuses a worker function
-- paused by a fatal claim (see resume_worker_function) and a queue that is not on the flow's
-- route.
-- Locks: the worker_functions row (upsert).
-- Called by: EdgeWorker startup.
create or replace function pgflow.register_worker(worker_id uuid, function_name text, flow_slug text,
                                       queue_name text, worker_protocol int)
returns pgflow.workers
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_route text[];
  v_function pgflow.worker_functions;
  v_worker pgflow.workers;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  select * into v_flow from pgflow.flows f where f.flow_slug = register_worker.flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist; compile it first (ensure_flow_compiled)',
      register_worker.flow_slug using errcode = 'no_data_found';
  end if;
  v_route := case when v_flow.queue_mode = 'flow' then array[lower(v_flow.flow_slug)]
                  else array(select s.queue_name from pgflow.steps s
                             where s.flow_slug = v_flow.flow_slug order by s.step_index) end;
  if register_worker.queue_name is null or not register_worker.queue_name = any(v_route) then
    raise exception 'Queue "%" is not on the route of flow "%" (%)',
      register_worker.queue_name, register_worker.flow_slug,
      case when v_flow.queue_mode = 'flow' then format('its queue is "%s"', v_route[1])
           else 'its step queues are ' || array_to_string(v_route, ', ') end
      using errcode = 'invalid_parameter_value';
  end if;

  insert into pgflow.worker_functions (function_name, updated_at)
  values (register_worker.function_name, clock_timestamp())
  on conflict (function_name) do update set updated_at = clock_timestamp()
  returning * into v_function;
  if v_function.paused_at is not null then
    -- (The command is quoted for pasting: a function name may hold a quote.)
    raise exception 'Worker function "%" is paused since % (%); fix the cause, then run: select pgflow.resume_worker_function(%);',
      v_function.function_name, v_function.paused_at, v_function.pause_reason,
      quote_literal(v_function.function_name)
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
  values (register_worker.worker_id, register_worker.queue_name, register_worker.function_name,
          register_worker.worker_protocol)
  returning * into v_worker;
  return v_worker;
end;
$$;
