-- The fatal outcome of a claim: every message of the batch is made visible again (but a held
-- task's: it waits for its admission, since 0018), the worker's function is paused
-- (pgflow.worker_functions; resume_worker_function lifts it), and one row per message is
-- returned: `fatal` with the reason for each unsupported message, `held` for a held task's,
-- `reset` for the others. Nothing is claimed or archived, and nothing is raised, so the reset
-- and the pause commit with the claim's transaction.
-- Locks: the queue rows of the batch; the worker_functions row (_pause_worker_function).
-- Called by: claim_tasks.
create or replace function pgflow._refuse_claim_batch(p_queue_name text, p_function_name text,
                                                      p_items pgflow._claim_item[])
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow.set_vt_batch(p_queue_name,
                              array(select c.msg_id from unnest(p_items) c where c.class <> 'held' order by c.msg_id),
                              array(select 0 from unnest(p_items) c where c.class <> 'held'));
  perform pgflow._pause_worker_function(p_function_name,
    format('fatal claim on queue "%s": unsupported message(s) %s', p_queue_name,
           (select string_agg(c.msg_id::text, ', ' order by c.msg_id)
            from unnest(p_items) c where c.class = 'fatal')));
  return query
  select case when c.class in ('fatal', 'held') then c.class else 'reset' end, p_queue_name, c.msg_id,
         null::text, null::uuid, null::text, null::int, null::int, null::jsonb, null::jsonb,
         c.reason, null::int
  from unnest(p_items) c order by c.msg_id;
end;
$$;
