-- Rows pgflow locks where it serialises work that has no row of its own to lock: the alias and
-- definition locks of a flow that may not exist yet (lock order positions 0 and 1,
-- sql/schema/README.md) and stall recovery (one pass at a time). They were advisory locks before
-- schema 0012; but any login may take any advisory lock, so a login without a single grant could
-- stall worker startup, activation and stall recovery. Locking one of these rows needs UPDATE on
-- this table, which only its owner has (docs/security.md).
--
-- lock_name: 'alias:<lower(alias)>', 'flow:<lower(flow slug)>' (created on first use by
-- _lock_row) or 'stall_recovery'. last_completed_at: when the last stall recovery pass ended
-- (the 'stall_recovery' row only).
create table pgflow.locks (
  lock_name         text primary key,
  last_completed_at timestamptz
);
insert into pgflow.locks (lock_name) values ('stall_recovery');
