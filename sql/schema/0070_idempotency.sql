-- Idempotent starts (since 0017): one row per (flow alias, idempotency key) that started a run.
-- A start with a key that already has a row returns that row's run instead of starting another
-- (start_run_idempotent); deleting the run (pruning, delete_flow_and_data) deletes its row, which
-- frees the key. Keys are scoped by alias, not by concrete version: a key started on V1 of an
-- alias is found by a start of the same alias after V2 was activated.
--
-- The foreign key is checked at commit (DEFERRABLE INITIALLY DEFERRED): a start inserts its key
-- row before the run it names, so that concurrent starts with one key queue on the key's
-- unique index entry and exactly one of them creates a run. Its ON DELETE CASCADE is not
-- deferred (PostgreSQL never defers referential actions): a deleted run takes its key at once.
create table pgflow.run_idempotency_keys (
  flow_alias      text not null,
  idempotency_key text not null,
  run_id          uuid not null,
  created_at      timestamptz not null default now(),
  constraint run_idempotency_keys_pkey primary key (flow_alias, idempotency_key),
  -- One key per run; also the index the cascade from runs looks a deleted run's key up by.
  constraint run_idempotency_keys_run_id_key unique (run_id),
  constraint run_idempotency_keys_run_id_fkey foreign key (run_id)
    references pgflow.runs (run_id) on delete cascade deferrable initially deferred,
  constraint idempotency_key_length check (length(idempotency_key) between 1 and 255)
);
