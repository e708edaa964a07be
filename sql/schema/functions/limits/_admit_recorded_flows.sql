-- Admits now the flows this transaction recorded for its commit (_note_gated_task: tasks it
-- queued held, slots it freed), and clears the record, so its commit admits nothing (since
-- 0028); returns those flows. For callers that must see an admission's error where they can
-- still undo their own work (wake_waiting_tasks: at commit, a run's failing admission, its step
-- having lost its queue, would fail the whole call) or whose commit must not wait for a gate
-- (stall recovery's sweep). `p_wait`: wait for each gate row, in byte order of slugs, as the
-- commit would; or skip a gate another transaction holds, as the sweep does: that flow's next
-- admission (any commit that queues a held task of it or frees one of its slots) or stall
-- recovery's sweep then admits what it left. Nothing outside READ COMMITTED, like the commit
-- (the record stays: that commit admits nothing either).
-- Locks: gate rows in byte order of slugs -> as _admit_tasks.
-- Called by: wake_waiting_tasks, _admit_waiting_tasks (stall recovery's sweep).
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
