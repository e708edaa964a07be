-- Registers a worker of this database's protocol for one flow on one queue, after
-- compilation: the flow's queue in queue mode `flow`, one step's private queue in mode `step`
-- (the worker row records that queue; its claims name the step). Refuses a worker function
-- paused by a fatal claim (see resume_worker_function) and a queue that is not on the flow's
-- route, and a function name outside 1..256 bytes (22023).
-- Locks: the worker_functions row (upsert); the wait is bounded (_bound_lock_waits) and a
-- timeout names the holder.
-- Called by: EdgeWorker startup.
create or replace function pgflow.register_worker(worker_id uuid, function_name text, flow_slug text,
                                       queue_name text, worker_protocol int)
returns pgflow.workers
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_flow pgflow.flows;
  v_route text[];
  v_function pgflow.worker_functions;
  v_worker pgflow.workers;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  -- (Bounded: a name is a primary key, and a btree entry must fit in a third of a page.)
  if coalesce(octet_length(register_worker.function_name), 0) not between 1 and 256 then
    raise exception 'Worker function name must be 1 to 256 bytes long, not %',
      coalesce(octet_length(register_worker.function_name), 0)
      using errcode = 'invalid_parameter_value';
  end if;
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
  insert into pgflow.claim_fences (worker_id) values (register_worker.worker_id);  -- since 0030
  perform set_config('lock_timeout', v_restore, true);
  return v_worker;
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('the row of worker function "%s"', register_worker.function_name),
                                     null, 'pgflow.worker_functions', v_since, v_error);
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.register_worker(uuid, text, text, text, int) from public;
