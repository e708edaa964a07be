-- Startup compilation, the only compile path since upstream 0.16.0.
--
-- ensure_flow_compiled(flow_slug, shape, worker_protocol): for protocol-2 workers. Creates a
-- missing flow from the worker's shape (compiled), verifies an existing one (verified; also
-- checks its generated queue is present and owned), recompiles destructively on a local
-- database (recompiled), or reports the differences and changes nothing (mismatch).
--
-- ensure_flow_compiled(flow_slug, shape): upstream 0.16.0's signature. Workers of 0.16.0 call
-- it first; it refuses them with the protocol error, so they stop before registering.
--
-- Locks: the flow's definition lock (then whatever compilation or deletion takes).
-- Called by: EdgeWorker startup (src/worker/worker.cc).
create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb) returns jsonb
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._require_worker_protocol(null);
  return null;
end;
$$;

create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb, worker_protocol int)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_diffs text[];
  v_status text;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  perform pgflow._validate_flow_shape(shape);
  perform pgflow._lock_flow_definition(ensure_flow_compiled.flow_slug);

  if not exists (select 1 from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug) then
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
    v_status := 'compiled';
    v_diffs := '{}';
  else
    v_diffs := pgflow._compare_flow_shapes(shape, pgflow._get_flow_shape(ensure_flow_compiled.flow_slug));
    if cardinality(v_diffs) = 0 then
      v_status := 'verified';
      -- Verifying also checks the generated queue is present and owned.
      perform pgflow._provision_flow_queue(ensure_flow_compiled.flow_slug);
      -- A flow without steps owns its queue only as "created together with the flow" (see
      -- _provision_flow_queue, delete_flow_and_data). If the queue of such a flow persisted
      -- earlier (create_flow alone) had to be provisioned just now, the definition is complete
      -- only now: record it, or the next verification would take the queue for a foreign one.
      update pgflow.flows f set created_at = now()
      where f.flow_slug = ensure_flow_compiled.flow_slug and f.created_at <> now()
        and not exists (select 1 from pgflow.steps s where s.flow_slug = f.flow_slug)
        and exists (select 1 from pgmq.meta m
                    where m.queue_name = lower(f.flow_slug) and m.created_at = now());
    elsif pgflow.is_local() then
      perform pgflow.delete_flow_and_data(ensure_flow_compiled.flow_slug);
      perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
      v_status := 'recompiled';
    else
      v_status := 'mismatch';
    end if;
  end if;
  return jsonb_build_object('status', v_status, 'differences', to_jsonb(v_diffs),
                            'queue_name', lower(ensure_flow_compiled.flow_slug));
end;
$$;
