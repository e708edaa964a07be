-- When a wait step's task that starts waiting now wakes (since 0021): a signal's timeout (NULL:
-- never), a sleep's end - `seconds` after now, or the timestamp `until` names in the step's
-- input. A sleep whose `until` finds no ISO 8601 timestamp there is due at once, with the reason
-- as `error_message` (_settle_waits fails the task with it).
-- "Now" is the wall clock (clock_timestamp(), since 0027), not the transaction's start: the
-- caller is often a worker's complete_task transaction, which may have begun long before, and
-- a deadline counted from then could be past already. A timestamp without an explicit offset
-- (or zone) is read as UTC (since 0027: the function pins timezone = UTC), so the same run
-- input wakes at the same instant whatever the TimeZone of the session that started the step;
-- before, it was read in that session's TimeZone. Seconds are read as numbers (since 0028): a
-- definition may spell a whole number `60.0` (_is_whole_seconds accepts it; JSON from Python
-- does), which an integer cast refused, failing every start of the step.
-- Locks: none.
-- Called by: _start_waiting_tasks, resume_run.
create or replace function pgflow._wait_deadline(p_run pgflow.runs, p_step_slug text, p_wait jsonb,
                                                 out wake_at timestamptz, out error_message text)
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set timezone = 'UTC'  -- an `until` without an offset is UTC (see above)
as $$
declare
  v_value jsonb;
begin
  if p_wait->>'kind' = 'signal' then
    wake_at := clock_timestamp() + make_interval(secs => (p_wait->>'timeout')::numeric::int);
  elsif p_wait ? 'seconds' then
    wake_at := clock_timestamp() + make_interval(secs => (p_wait->>'seconds')::numeric::int);
  else
    -- The single step's input, as its handler would get it: the run input and each
    -- dependency's output.
    v_value := (jsonb_build_object('run', p_run.input)
                || coalesce((select jsonb_object_agg(d.dep_slug, ss.output)
                             from pgflow.deps d
                             join pgflow.step_states ss on ss.run_id = p_run.run_id
                                                       and ss.step_slug = d.dep_slug
                             where d.flow_slug = p_run.flow_slug and d.step_slug = p_step_slug),
                            '{}'::jsonb))
               #> array(select jsonb_array_elements_text(p_wait->'until'));
    begin
      -- An ISO 8601 date and time (PostgreSQL would also take words such as 'infinity').
      if jsonb_typeof(v_value) is distinct from 'string'
         or (v_value #>> '{}') !~ '^\d{4}-\d{2}-\d{2}([ T]|$)' then
        raise invalid_datetime_format;
      end if;
      wake_at := (v_value #>> '{}')::timestamptz;
    exception when others then  -- (only the cast above can raise)
      error_message := format(
        'Sleep step "%s" found no ISO 8601 timestamp at %s of its input (found %s)', p_step_slug,
        array_to_string(array(select jsonb_array_elements_text(p_wait->'until')), '.'),
        -- Its JSON type, never the value: the text is stored, shown and broadcast (since 0031).
        coalesce('a JSON ' || jsonb_typeof(v_value), 'nothing'));
      wake_at := clock_timestamp();
    end;
  end if;
end;
$$;
