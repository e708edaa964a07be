-- {"run": <runs row>, "steps": [<step_states rows in step order>], "flow_alias": <the alias the
-- run's flow belongs to>}, or NULL for an unknown run. The run row carries the concrete slug. A
-- wait step whose tasks wait (since 0021) also has "waiting_tasks" (how many) and "wake_at"
-- (their earliest deadline, or null); no other step has those keys.
-- SECURITY DEFINER (upstream's client calls it through RPC): only granted roles may call it.
-- Locks: none (reads).
-- Called by: start_flow_with_states_by_slug (and so start_flow_with_states),
-- Client::get_run / wait_for_run; upstream clients.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.get_run_with_states(run_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return (select jsonb_build_object(
    'run', to_jsonb(r),
    'steps', coalesce((
      select jsonb_agg(to_jsonb(ss) || coalesce(w.waiting, '{}'::jsonb) order by s.step_index)
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      left join lateral (
        select jsonb_build_object('waiting_tasks', count(*), 'wake_at', min(t.wake_at)) as waiting
        from pgflow.step_tasks t
        where s.wait is not null and ss.status = 'started'
          and t.run_id = ss.run_id and t.step_slug = ss.step_slug and t.status = 'waiting'
        having count(*) > 0) w on true
      where ss.run_id = r.run_id), '[]'::jsonb),
    'flow_alias', (select f.flow_alias from pgflow.flows f where f.flow_slug = r.flow_slug))
  from pgflow.runs r
  where r.run_id = get_run_with_states.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.get_run_with_states(uuid) from public;
