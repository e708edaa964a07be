-- Refuses a worker registration without this database's protocol (0.16.0 workers insert into
-- pgflow.workers directly) with the protocol error, not a bare NOT NULL violation.
-- register_worker passes its protocol.
create or replace function pgflow._workers_require_protocol() returns trigger
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._require_worker_protocol(new.protocol);
  return new;
end;
$$;

create or replace trigger workers_require_protocol before insert on pgflow.workers
  for each row execute function pgflow._workers_require_protocol();
