-- Admits now, without waiting for a gate row, the flows this transaction recorded for its
-- commit (_note_gated_task: tasks it queued held, slots it freed), and clears the record, so
-- its commit admits nothing (since 0028). For callers whose commit must not wait for a gate
-- (stall recovery's sweep) or that must see an admission's error where they can still undo
-- their own work (wake_waiting_tasks: at commit, a run's failing admission, its step having
-- lost its queue, would fail the whole call). A recorded flow whose gate another transaction holds is skipped, as the sweep skips
-- it: that flow's next admission (any commit that queues a held task of it or frees one of its
-- slots) or stall recovery's sweep admits what it left. Nothing outside READ COMMITTED, like
-- the commit (the record stays: that commit admits nothing either).
-- Locks: gate rows in byte order of slugs (never waited for) -> as _admit_tasks.
-- Called by: wake_waiting_tasks, _admit_waiting_tasks (stall recovery's sweep).
create or replace function pgflow._admit_recorded_flows()
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_recorded text[];
  v_keys jsonb;
  v_flow text;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return;
  end if;
  v_recorded := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  if cardinality(v_recorded) = 0 then
    return;
  end if;
  v_keys := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
  perform set_config('pgflow.gated_flows', '', true);
  perform set_config('pgflow.gated_keys', '', true);
  for v_flow in select r from unnest(v_recorded) r order by r collate "C" loop
    perform pgflow._admit_tasks(v_flow, false,
                                (select jsonb_agg(jsonb_build_array(e->>1, e->>2))
                                 from jsonb_array_elements(v_keys) e where e->>0 = v_flow));
  end loop;
end;
$$;
