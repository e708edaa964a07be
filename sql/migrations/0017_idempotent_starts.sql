-- pgflow SQL core, 0017: idempotent starts.
--
-- A producer that retries a start after a timeout, or two producers reacting to the same
-- event, must not start a flow twice. A caller's run id made a start safe to repeat (the second
-- fails with "Run id … is taken"), but it has to be a UUID the caller keeps, and the repeat is an
-- error to catch. An idempotency key is the caller's own name for the start (an order id, a
-- webhook delivery id): the first start with a key creates the run, every later one with the same
-- alias and key returns that run and says it did not create it (docs/flow-control.md,
-- "Idempotent starts").
--   * pgflow.run_idempotency_keys: (flow alias, key) -> run id; deleting the run deletes the row
--     (ON DELETE CASCADE), so pruning a run frees its key. The foreign key is checked at commit:
--     a start inserts its key row before its run, and concurrent starts with one key queue on
--     the key's index entry.
--   * pgflow.start_run_idempotent(flow_alias, input, idempotency_key) and
--     start_run_idempotent_by_slug(flow_slug, input, idempotency_key) return (run_id, created);
--     SECURITY DEFINER, granted to pgflow_starter by sql/contrib/grants.sql (run it again).
--
-- Data: a new empty table; no row, queue or message changes. Starts without a key run the same
-- functions as before.
-- Locks: ACCESS EXCLUSIVE on the new table; SHARE ROW EXCLUSIVE on pgflow.runs for the foreign
-- key, which waits for every open transaction that wrote runs and, while it waits and until
-- commit, holds up starts and results (claims do not write runs). It waits at most 10 s
-- (lock_timeout), after which it fails with nothing changed: run it again. Applied by the
-- pgflow migration runner in one transaction. Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
-- [end migration-only]

create table pgflow.run_idempotency_keys (
  flow_alias      text not null,
  idempotency_key text not null,
  run_id          uuid not null,
  created_at      timestamptz not null default now(),
  constraint run_idempotency_keys_pkey primary key (flow_alias, idempotency_key),
  constraint run_idempotency_keys_run_id_key unique (run_id),
  constraint run_idempotency_keys_run_id_fkey foreign key (run_id)
    references pgflow.runs (run_id) on delete cascade deferrable initially deferred,
  constraint idempotency_key_length check (length(idempotency_key) between 1 and 255)
);

set local check_function_bodies = off;

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
-- Locks: the key's index entry, then those of start_flow_by_slug (the new run's rows; queue rows
-- last). Nothing is locked on a repeat: the key's row is only read. The wait for another
-- transaction's uncommitted key is bounded only by the caller's lock_timeout; a caller whose
-- transaction starts several keys, or holds run locks, should take keys in one order.
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
    select k.run_id into v_run_id
    from pgflow.run_idempotency_keys k
    where k.flow_alias = v_alias and k.idempotency_key = p_idempotency_key;
    if found then
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
      perform pgflow.start_flow_by_slug(p_flow_slug, p_input, v_run_id);
      run_id := v_run_id;
      created := true;
      return;
    end if;
  end loop;
  -- (The key is not in the message: it is the caller's data, and server logs keep errors.)
  raise exception 'An idempotency key of alias "%" changed hands three times during one start; try again',
    v_alias using errcode = 'serialization_failure';
end;
$$;

-- ---- sql/schema/functions/runtime/start_run_idempotent.sql
-- The idempotent start: a run of the active version of alias `flow_alias` for
-- `idempotency_key`, created once (start_run's arguments, with the key where its run id is).
-- The first start with a key creates the run (created = true); every later start with the same
-- alias and key returns that run's id (created = false), whatever its input, its status or the
-- alias's active version now — until the run is deleted (pruning frees its key). Concurrent
-- starts with one key create exactly one run. A key is 1 to 255 characters, compared exactly;
-- keys of different aliases never meet, and every starter of an alias shares its keys.
-- SECURITY DEFINER like start_run, and granted to the same roles; it runs in the caller's
-- transaction.
-- Locks: those of _start_run_idempotent.
-- Called by: Client::start_run_idempotent (and Transaction's), `pgflow start --idempotency-key`;
-- other drivers.
create or replace function pgflow.start_run_idempotent(flow_alias text, input jsonb, idempotency_key text,
                                                       out run_id uuid, out created boolean)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  select s.run_id, s.created into run_id, created
  from pgflow._start_run_idempotent(pgflow._resolve_flow_alias(start_run_idempotent.flow_alias),
                                    start_run_idempotent.input, start_run_idempotent.idempotency_key) s;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_idempotent(text, jsonb, text) from public;

-- ---- sql/schema/functions/runtime/start_run_idempotent_by_slug.sql
-- start_run_idempotent of the concrete flow `flow_slug` (a pinned version). The key is still
-- scoped by the flow's alias: a start by slug and a start by alias with one key find each
-- other's run. SECURITY DEFINER, like start_run_idempotent.
-- Locks: those of _start_run_idempotent.
-- Called by: Client::start_run_idempotent_by_slug (and Transaction's); other drivers.
create or replace function pgflow.start_run_idempotent_by_slug(flow_slug text, input jsonb, idempotency_key text,
                                                               out run_id uuid, out created boolean)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  select s.run_id, s.created into run_id, created
  from pgflow._start_run_idempotent(start_run_idempotent_by_slug.flow_slug,
                                    start_run_idempotent_by_slug.input,
                                    start_run_idempotent_by_slug.idempotency_key) s;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_idempotent_by_slug(text, jsonb, text) from public;
