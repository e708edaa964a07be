-- Fair shares (since 0019): makes key values with waiting tasks active in a flow's stride order
-- (concurrency_keys), each at the lowest active pass of its scope when it joins or comes back,
-- with this admission's turn as its last (so it is served soon, but never ahead of a value that
-- has waited since an earlier turn: a stream of new values cannot starve one that waits): `p_keys`
-- ([[step, key], ...]) are the values of tasks a committing transaction queued held; with
-- `p_repair` (stall recovery's sweep) every value with waiting tasks is found (one index probe
-- per value) — what a commit outside READ COMMITTED, which admits nothing, left — and then idle
-- rows are deleted.
-- Only values that have a held queued task are activated (since 0027), one probe of
-- idx_step_tasks_held_keys each: `p_keys` comes from the transaction's record (the setting
-- pgflow.gated_keys, _note_gated_task), which any role may set for its own transaction, and
-- before 0027 a planted list made this SECURITY DEFINER admission write key value rows that
-- role may not write, and walk them all while holding the gate row. A legitimate value always
-- passes: the transaction queued a held task of it and admits before its commit ends.
-- Locks: the caller holds the flow's gate row; key value rows.
-- Called by: _admit_tasks.
create or replace function pgflow._activate_keys(p_gate pgflow.concurrency_gates, p_keys jsonb,
                                                 p_repair boolean)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_step record;
  v_found jsonb := coalesce(p_keys, '[]');
begin
  if p_repair then
    for v_step in
      select s.step_slug
      from pgflow.steps s
      left join pgflow.step_concurrency_limits l on l.flow_slug = s.flow_slug and l.step_slug = s.step_slug
      where s.flow_slug = p_gate.flow_slug and s.concurrency_limited
        and coalesce(l.key_path, p_gate.key_path) is not null
    loop
      v_found := v_found || coalesce((
        with recursive keys(key) as (
          (select t.concurrency_key from pgflow.step_tasks t
           where t.flow_slug = p_gate.flow_slug and t.step_slug = v_step.step_slug and t.gate = 'held'
             and t.status = 'queued' and t.concurrency_key is not null
           order by t.concurrency_key limit 1)
          union all
          select (select t.concurrency_key from pgflow.step_tasks t
                  where t.flow_slug = p_gate.flow_slug and t.step_slug = v_step.step_slug and t.gate = 'held'
                    and t.status = 'queued' and t.concurrency_key > k.key
                  order by t.concurrency_key limit 1)
          from keys k where k.key is not null)
        select jsonb_agg(jsonb_build_array(v_step.step_slug, k.key)) from keys k where k.key is not null), '[]');
    end loop;
  end if;

  insert into pgflow.concurrency_keys as k (flow_slug, scope, key, pass, last_turn)
  select p_gate.flow_slug, x.scope, x.key,
         coalesce((select min(a.pass) from pgflow.concurrency_keys a
                   where a.flow_slug = p_gate.flow_slug and a.scope = x.scope and a.pass is not null), 0),
         p_gate.turn
  from (select distinct case when l.key_path is not null then e->>0 else '' end as scope, e->>1 as key
        from jsonb_array_elements(v_found) e
        left join pgflow.step_concurrency_limits l on l.flow_slug = p_gate.flow_slug and l.step_slug = e->>0
        where exists (select 1 from pgflow.step_tasks t
                      where t.flow_slug = p_gate.flow_slug and t.step_slug = e->>0
                        and t.concurrency_key = e->>1 and t.gate = 'held' and t.status = 'queued')) x
  order by x.scope, x.key
  on conflict (flow_slug, scope, key) do update set pass = excluded.pass, last_turn = excluded.last_turn
    where k.pass is null;

  if p_repair then
    delete from pgflow.concurrency_keys k where k.flow_slug = p_gate.flow_slug and k.pass is null;
  end if;
end;
$$;
