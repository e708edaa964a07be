-- pgflow SQL core, 0009: ending tasks never waits for a message a reader holds.
--
--   * _archive_messages(queue_names, message_ids, p_skip_locked default false): with
--     p_skip_locked, messages another session holds locked are left where they are.
--   * _terminate_tasks (cancel_run, a failing run, a skipped step) archives that way: a worker
--     that has just read a message of the run (pgmq.read locks it) waits in its claim for the
--     run the caller holds, so waiting for that message deadlocked (40P01 after
--     deadlock_timeout; cancel_run reported it to the caller). The reader's claim archives the
--     message once the caller commits, because its task has ended.
--
-- Only functions change: no table is touched and no lock is taken beyond those of
-- CREATE OR REPLACE FUNCTION. Applied by the pgflow migration runner in one transaction.
-- Immutable once released.

set local check_function_bodies = off;

drop function pgflow._archive_messages(text[], bigint[]);

-- ---- sql/schema/functions/queues/_terminate_tasks.sql
-- Moves every queued or started task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages, one batch per task queue snapshot
-- (_archive_messages, skipping messages a reader holds: its claim archives them): task rows
-- first, then queue rows. The queues of tasks that were started
-- (a worker may be running them) are told to stop them (_announce_stopped_tasks).
-- Locks: the caller holds the run.
-- Called by: _fail_run (and so cancel_run), _cascade_force_skip_steps, _fail_task.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queues text[];
  v_ids bigint[];
  v_queue text;
begin
  -- (Read before the update: the update's RETURNING sees only the new status.)
  for v_queue in
    select distinct t.queue_name from pgflow.step_tasks t
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status = 'started'
    order by 1
  loop
    perform pgflow._announce_stopped_tasks(v_queue);
  end loop;
  with terminated as (
    update pgflow.step_tasks t
    set status = p_status
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status in ('queued', 'started')
    returning t.queue_name, t.message_id)
  select array_agg(x.queue_name), array_agg(x.message_id)
  into v_queues, v_ids
  from terminated x;
  perform pgflow._archive_messages(v_queues, v_ids, p_skip_locked => true);
end;
$$;

-- ---- sql/schema/functions/queues/_archive_messages.sql
-- Archives task messages given as (queue, message id) pairs: one pgmq.archive per queue, queues
-- in name order, ids sorted; NULL ids (tasks without a message) are skipped. Idempotent.
-- With `p_skip_locked`, a message another session holds locked is left where it is: a worker
-- that has just read it (pgmq.read) and now waits in claim_tasks for the run the caller holds.
-- Waiting for that message would deadlock (the reader waits for the run, the caller for the
-- message); once the caller commits, the reader's claim archives it because its task has ended
-- (_classify_claim_batch).
-- Locks: the caller holds the tasks' runs; queue rows last (lock order position 5).
-- Called by: _terminate_tasks (skipping locked messages), complete_tasks.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[],
                                                    p_skip_locked boolean default false)
returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  v_batch record;
  v_ids bigint[];
begin
  for v_batch in
    select m.queue_name, array_agg(m.id order by m.id) as ids
    from unnest(p_queue_names, p_message_ids) m(queue_name, id)
    where m.id is not null
    group by m.queue_name
    order by m.queue_name
  loop
    v_ids := v_batch.ids;
    if p_skip_locked then
      execute format('select coalesce(array_agg(x.msg_id order by x.msg_id), ''{}'') from ('
                     'select q.msg_id from pgmq.%I q where q.msg_id = any($1) order by q.msg_id '
                     'for update skip locked) x', 'q_' || v_batch.queue_name)
      into v_ids using v_ids;
    end if;
    if cardinality(v_ids) > 0 then
      perform pgmq.archive(v_batch.queue_name, v_ids);
    end if;
  end loop;
end;
$$;
