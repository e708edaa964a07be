-- Raises the protocol error unless the database supports `p_protocol`: the one it speaks
-- (worker_protocol()) or 4 and up, whose workers call nothing that changed since; the message says
-- whether the worker or the database needs upgrading.
-- Called by: ensure_flow_compiled, register_worker, track_worker_function, _workers_require_protocol.
create or replace function pgflow._require_worker_protocol(p_protocol int) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_protocol is null or p_protocol not between 4 and pgflow.worker_protocol() then
    raise exception 'pgflow: worker protocol % is not supported by this database (it speaks protocol %): %',
      coalesce(p_protocol::text, 'none'), pgflow.worker_protocol(),
      case when coalesce(p_protocol, 0) < 2
             then 'upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)'
           when p_protocol < pgflow.worker_protocol()
             then 'upgrade the worker (its pgflow library is older than this database''s schema)'
           else 'upgrade the database with `pgflow migrate`' end
      using errcode = 'feature_not_supported';
  end if;
end;
$$;
