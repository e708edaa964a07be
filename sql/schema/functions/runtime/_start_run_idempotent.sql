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
