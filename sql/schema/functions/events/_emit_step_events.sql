-- Publishes the current status of several steps of one run, in the order given (event order
-- is part of the contract: a parent's event before its dependents').
-- Called by: cascade_resolve_conditions, cascade_complete_taskless_steps, _cascade_force_skip_steps.
create or replace function pgflow._emit_step_events(p_run_id uuid, p_step_slugs text[])
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(array_agg(ss.run_id order by u.n), array_agg(ss.flow_slug order by u.n),
                              array_agg(ss.step_slug order by u.n), array_agg(ss.status order by u.n))
  from pgflow.step_states ss
  join unnest(p_step_slugs) with ordinality u(slug, n) on ss.step_slug = u.slug
  where ss.run_id = p_run_id;
end;
$$;
