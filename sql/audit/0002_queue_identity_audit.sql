-- pgflow 0002 (queue identity): read-only pre-upgrade audit.
--
-- Run against a database at schema version 0001 (upstream 0.16.0 semantics) BEFORE upgrading:
--     psql "$DATABASE_URL" -f share/pgflow/sql/audit/0002_queue_identity_audit.sql
-- It changes nothing: it creates two temporary functions (gone when the session ends) and
-- prints one row per finding:
--   error   the upgrade will refuse until this is resolved (exact flow/step and reason given)
--   action  do this after upgrading (e.g. replace the optional pruning helper)
--   info    what the upgrade will do (backfill)
-- Large task/message problems are reported as exact counts with at most 5 sample ids.
-- A clean report is a point-in-time result: the migration re-checks everything under its
-- maintenance fence and refuses on its own. Nothing here renames, archives or deletes.
-- The text between the AUDIT markers is the migration's own preflight (kept identical by a test).

-- BEGIN AUDIT
create function pg_temp.pgflow_slug_problem(slug text) returns text
language sql immutable
as $$
  select case
    when slug is null or slug = '' then 'is empty'
    when length(slug) > 128 then 'is longer than 128 characters'
    when slug !~ '^[A-Za-z0-9_]+$' then 'may contain only ASCII letters, digits and underscores'
    when slug ~ '^[0-9]' then 'starts with a digit'
    when slug ~ '^_' then 'starts with an underscore'
    when slug ~ '_$' then 'ends with an underscore'
    when slug ~ '__' then 'contains a double underscore (reserved for generated queue names)'
    when slug = 'run' then 'is the reserved word "run"'
  end
$$;

-- One row per problem. severity: error (the upgrade refuses), action (do it after upgrading),
-- info (what the upgrade will do). Counts are exact; samples are at most 5 keys.
create function pg_temp.pgflow_queue_identity_audit()
returns table (severity text, category text, flow_slug text, step_slug text, detail text,
               repair_hint text)
language plpgsql
as $$
declare
  v_flow record;
  v_meta_count int;
  v_meta_names text;
  v_count bigint;
  v_sample text;
  v_prune record;
begin
  -- Slugs under the shared rules (letters, digits, single internal underscores, no leading
  -- digit or underscore, no trailing underscore, no __, at most 128, not "run").
  return query
  select 'error', 'invalid_flow_slug', f.flow_slug, null::text,
         format('flow slug "%s" %s', f.flow_slug, pg_temp.pgflow_slug_problem(f.flow_slug)),
         'create the flow under a compliant slug (a new version), move producers to it, then delete the old flow with pgflow.delete_flow_and_data()'
  from pgflow.flows f where pg_temp.pgflow_slug_problem(f.flow_slug) is not null;

  return query
  select 'error', 'invalid_step_slug', s.flow_slug, s.step_slug,
         format('step slug "%s" of flow "%s" %s', s.step_slug, s.flow_slug,
                pg_temp.pgflow_slug_problem(s.step_slug)),
         'rename the step in a new flow version; flow definitions are immutable'
  from pgflow.steps s where pg_temp.pgflow_slug_problem(s.step_slug) is not null;

  return query
  select 'error', 'flow_queue_name_too_long', f.flow_slug, null::text,
         format('queue name "%s" would be %s characters; PGMQ allows 47', lower(f.flow_slug),
                length(f.flow_slug)),
         'create the flow under a slug of at most 47 characters'
  from pgflow.flows f where length(f.flow_slug) > 47;

  return query
  select 'error', 'case_conflict_flow', f.flow_slug, null::text,
         format('flow slug "%s" differs only in case from %s', f.flow_slug,
                string_agg(format('"%s"', o.flow_slug), ', ' order by o.flow_slug)),
         'keep one of these flows; recreate the others under distinct slugs'
  from pgflow.flows f
  join pgflow.flows o on lower(o.flow_slug) = lower(f.flow_slug) and o.flow_slug <> f.flow_slug
  group by f.flow_slug;

  return query
  select 'error', 'case_conflict_step', s.flow_slug, s.step_slug,
         format('step slug "%s" differs only in case from %s in flow "%s"', s.step_slug,
                string_agg(format('"%s"', o.step_slug), ', ' order by o.step_slug), s.flow_slug),
         'recreate the flow as a new version with distinct step slugs'
  from pgflow.steps s
  join pgflow.steps o on o.flow_slug = s.flow_slug and lower(o.step_slug) = lower(s.step_slug)
                     and o.step_slug <> s.step_slug
  group by s.flow_slug, s.step_slug;

  -- Each flow's generated queue: exactly one pgmq.meta row (any spelling) and both tables.
  for v_flow in select f.flow_slug, lower(f.flow_slug) as queue from pgflow.flows f
                order by f.flow_slug loop
    select count(*), string_agg(format('"%s"', m.queue_name), ', ' order by m.queue_name)
    into v_meta_count, v_meta_names
    from pgmq.meta m where lower(m.queue_name) = v_flow.queue;
    if v_meta_count = 0 then
      return query select 'error', 'queue_missing', v_flow.flow_slug, null::text,
        format('flow "%s" has no PGMQ queue "%s" in pgmq.meta', v_flow.flow_slug, v_flow.queue),
        'recreate the queue with pgmq.create() if its tables still exist, or delete the flow';
      continue;
    elsif v_meta_count > 1 then
      return query select 'error', 'queue_ambiguous', v_flow.flow_slug, null::text,
        format('pgmq.meta has %s rows for the same tables of queue "%s" of flow "%s": %s',
               v_meta_count, v_flow.queue, v_flow.flow_slug, v_meta_names),
        'keep one pgmq.meta row per queue: delete the alias rows (the tables are shared)';
      continue;
    end if;
    if to_regclass(format('pgmq.%I', 'q_' || v_flow.queue)) is null
       or to_regclass(format('pgmq.%I', 'a_' || v_flow.queue)) is null then
      return query select 'error', 'queue_malformed', v_flow.flow_slug, null::text,
        format('queue %s of flow "%s" lacks table pgmq.q_%s or pgmq.a_%s', v_meta_names,
               v_flow.flow_slug, v_flow.queue, v_flow.queue),
        'recreate the missing table (drop and recreate the queue when it holds no active work)';
      continue;
    end if;

    -- Active messages no pgflow task claims: the upgrade cannot give them an identity.
    execute format(
      'select count(*), string_agg(q.msg_id::text, '', '' order by q.msg_id) filter (where q.n <= 5)
       from (select q.msg_id, row_number() over (order by q.msg_id) as n from pgmq.%I q
             where not exists (select 1 from pgflow.step_tasks t
                               where lower(t.flow_slug) = $1 and t.message_id = q.msg_id)) q',
      'q_' || v_flow.queue)
    into v_count, v_sample using v_flow.queue;
    if v_count > 0 then
      return query select 'error', 'unmatched_active_message', v_flow.flow_slug, null::text,
        format('%s active message(s) in queue "%s" of flow "%s" match no task (e.g. msg_id %s)',
               v_count, v_flow.queue, v_flow.flow_slug, v_sample),
        'find who sent them (applications must not send to pgflow queues); archive or delete them with pgmq.archive()/pgmq.delete()';
    end if;
  end loop;

  -- (queue, message id) must identify one task.
  return query
  select 'error', 'duplicate_message_identity', min(d.flow_slug), null::text,
         format('%s message id(s) of queue "%s" of flow "%s" are shared by several tasks (e.g. msg_id %s)',
                count(*), d.queue, min(d.flow_slug),
                string_agg(d.message_id::text, ', ' order by d.message_id) filter (where d.n <= 5)),
         'inspect those step_tasks rows; delete the runs that hold the duplicates (pgflow cannot tell which task owns the message)'
  from (select lower(t.flow_slug) as queue, min(t.flow_slug) as flow_slug, t.message_id,
               row_number() over (partition by lower(t.flow_slug) order by t.message_id) as n
        from pgflow.step_tasks t where t.message_id is not null
        group by lower(t.flow_slug), t.message_id having count(*) > 1) d
  group by d.queue;

  -- What the backfill will do.
  return query
  select 'info', 'backfill', null::text, null::text,
         format('%s step(s) and %s task(s) (%s without a queue message) get queue_name = lower(flow_slug)',
                (select count(*) from pgflow.steps), (select count(*) from pgflow.step_tasks),
                (select count(*) from pgflow.step_tasks t where t.message_id is null)),
         null::text;

  -- The optional, manually installed pruning helper reads queues by flow slug.
  for v_prune in
    select p.oid, md5(p.prosrc) as hash from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'pgflow' and p.proname = 'prune_data_older_than'
  loop
    return query select 'action', 'prune_function_installed', null::text, null::text,
      case when v_prune.hash = 'c0f88f3fe24314bb6f00435208e4d8fc'
        then 'pgflow.prune_data_older_than(interval) is the stock pre-queue-identity version'
        else 'pgflow.prune_data_older_than(interval) is installed and differs from the stock version (customized?)' end,
      case when v_prune.hash = 'c0f88f3fe24314bb6f00435208e4d8fc'
        then 'after upgrading, replace it: psql -f share/pgflow/sql/contrib/prune_data_older_than.sql'
        else 'adapt it by hand: archive pruning must enumerate each flow''s queues (steps.queue_name) and task rows carry queue_name; see sql/contrib/prune_data_older_than.sql' end;
  end loop;
end;
$$;
-- END AUDIT

select severity, category, flow_slug, step_slug, detail, repair_hint
from pg_temp.pgflow_queue_identity_audit()
order by case severity when 'error' then 0 when 'action' then 1 else 2 end, category, flow_slug, step_slug;
