-- Admits the flows this transaction recorded for its commit (_note_gated_task: tasks it queued
-- held, slots it freed), in byte order of slugs, and clears the record; returns those flows.
-- It is the commit's admission (_admit_gated_tasks). Since 0028 two callers also make it
-- before their commit, which then admits nothing: wake_waiting_tasks, to meet an admission's
-- error where it can still undo its own work (at commit, a run's failing admission, its step
-- having lost its queue, would fail the whole call), and stall recovery's sweep, whose commit
-- must not wait for a gate. `p_wait`: wait for each gate row, as the commit does; or skip a gate
-- another transaction holds, as the sweep does (that flow's next admission, by any commit that
-- queues a held task of it or frees one of its slots, or the next sweep admits what it left).
-- Nothing outside READ COMMITTED (the record stays; a commit there admits nothing either).
-- Locks: gate rows in byte order of slugs -> as _admit_tasks.
-- Called by: _admit_gated_tasks (at commit), wake_waiting_tasks, _admit_waiting_tasks (stall
-- recovery's sweep).
create or replace function pgflow._admit_recorded_flows(p_wait boolean)
returns text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_recorded text[];
  v_keys jsonb;
  v_flow text;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return '{}';
  end if;
  v_recorded := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  if cardinality(v_recorded) = 0 then
    return '{}';
  end if;
  v_keys := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
  perform set_config('pgflow.gated_flows', '', true);
  perform set_config('pgflow.gated_keys', '', true);
  for v_flow in select r from unnest(v_recorded) r order by r collate "C" loop
    perform pgflow._admit_tasks(v_flow, p_wait,
                                (select jsonb_agg(jsonb_build_array(e->>1, e->>2))
                                 from jsonb_array_elements(v_keys) e where e->>0 = v_flow));
  end loop;
  return v_recorded;
end;
$$;
