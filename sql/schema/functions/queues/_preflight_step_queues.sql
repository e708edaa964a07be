-- Checks, before anything is created, that a new step-queued definition can create every one
-- of its private queues: no other flow routes to the name or has tasks in it, and neither a
-- PGMQ queue (in any letter case: pgmq.meta aliases address the same tables) nor orphan tables
-- hold it. For a definition that does not exist yet, an existing queue with a generated name
-- is a collision, never adopted. Every problem is listed in one error; nothing is changed.
-- Locks: none (reads); the caller holds the flow's definition lock.
-- Called by: _create_flow_from_shape.
create or replace function pgflow._preflight_step_queues(p_flow_slug text, p_queues text[])
returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_other text;
  v_meta text[];
  v_problems text[] := '{}';
begin
  foreach v_queue in array p_queues loop
    select coalesce(s.flow_slug, t.flow_slug) into v_other
    from (select 1) x
    left join lateral (select s.flow_slug from pgflow.steps s
                       where s.queue_name = v_queue and s.flow_slug <> p_flow_slug limit 1) s on true
    left join lateral (select t.flow_slug from pgflow.step_tasks t
                       where t.queue_name = v_queue and t.flow_slug <> p_flow_slug limit 1) t on true;
    select array_agg(m.queue_name::text order by m.queue_name) into v_meta
    from pgmq.meta m where lower(m.queue_name) = v_queue;
    if v_other is not null then
      v_problems := v_problems || format('queue "%s" is already used by flow "%s"', v_queue, v_other);
    elsif cardinality(v_meta) > 1 then
      v_problems := v_problems || format('pgmq.meta has %s rows for the tables of queue "%s" (%s): case aliases',
                                         cardinality(v_meta), v_queue, array_to_string(v_meta, ', '));
    elsif v_meta is not null then
      v_problems := v_problems || format('PGMQ queue "%s" already exists; pgflow never adopts a queue it did not create',
                                         v_meta[1]);
    elsif to_regclass(format('pgmq.%I', 'q_' || v_queue)) is not null
          or to_regclass(format('pgmq.%I', 'a_' || v_queue)) is not null then
      v_problems := v_problems || format('PGMQ tables pgmq.q_%s / pgmq.a_%s exist without a pgmq.meta row',
                                         v_queue, v_queue);
    end if;
  end loop;
  if cardinality(v_problems) > 0 then
    raise exception e'Flow "%" cannot get its step queues (nothing was created):\n  - %\nDrop or rename those queues, or deploy the flow under another slug',
      p_flow_slug, array_to_string(v_problems, e'\n  - ')
      using errcode = 'duplicate_object';
  end if;
end;
$$;
