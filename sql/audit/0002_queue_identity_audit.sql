-- pgflow 0002 (queue identity): read-only pre-upgrade audit.
--
-- Run against a database at schema version 0001 (upstream 0.16.0 semantics) BEFORE upgrading:
--     psql "$DATABASE_URL" -f share/pgflow/sql/audit/0002_queue_identity_audit.sql
-- It is one plain SELECT: it creates nothing (not even temporary objects) and writes nothing,
-- so it also runs in a read-only transaction and on a hot standby. It prints one row per finding:
--   error   the upgrade will refuse until this is resolved (exact flow/step and reason given)
--   action  do this after upgrading (e.g. replace the optional pruning helper)
--   info    what the upgrade will do (backfill)
-- Large task/message problems are reported as exact counts with at most 5 sample ids.
-- A clean report is a point-in-time result: the migration re-checks everything under its
-- maintenance fence and refuses on its own. Nothing here renames, archives or deletes.
--
-- The migration's preflight (sql/migrations/0002_queue_identity.sql, released and immutable)
-- runs the same checks, written there as a temporary function. Every category, detail and
-- repair hint below is worded exactly as there, so this report and the migration's refusal say
-- the same thing; tests/integration/upgrade_test.cc runs every problem through both and
-- compares them.

with
-- Every slug, flow and step alike, with what breaks the shared rules (letters, digits, single
-- internal underscores, no leading digit or underscore, no trailing underscore, no __, at most
-- 128, not "run"); null when the slug is fine.
slug_problem as (
  select sl.flow_slug, sl.step_slug,
         case
           when sl.slug is null or sl.slug = '' then 'is empty'
           when length(sl.slug) > 128 then 'is longer than 128 characters'
           when sl.slug !~ '^[A-Za-z0-9_]+$' then 'may contain only ASCII letters, digits and underscores'
           when sl.slug ~ '^[0-9]' then 'starts with a digit'
           when sl.slug ~ '^_' then 'starts with an underscore'
           when sl.slug ~ '_$' then 'ends with an underscore'
           when sl.slug ~ '__' then 'contains a double underscore (reserved for generated queue names)'
           when sl.slug = 'run' then 'is the reserved word "run"'
         end as problem
  from (select f.flow_slug, null::text as step_slug, f.flow_slug as slug from pgflow.flows f
        union all
        select s.flow_slug, s.step_slug, s.step_slug from pgflow.steps s) sl
),

-- Each flow's generated queue: its pgmq.meta rows under any spelling, and whether both of its
-- tables exist. A queue is usable only with exactly one meta row and both tables; later checks
-- look inside usable queues only (as the migration's loop does).
flow_queue as (
  select q.flow_slug, q.queue, q.meta_count, q.meta_names,
         case
           when q.meta_count = 0 then 'missing'
           when q.meta_count > 1 then 'ambiguous'
           when to_regclass(format('pgmq.%I', 'q_' || q.queue)) is null
                or to_regclass(format('pgmq.%I', 'a_' || q.queue)) is null then 'malformed'
           else 'usable'
         end as state
  from (select f.flow_slug, lower(f.flow_slug) as queue, count(m.queue_name) as meta_count,
               string_agg(format('"%s"', m.queue_name), ', ' order by m.queue_name) as meta_names
        from pgflow.flows f
        left join pgmq.meta m on lower(m.queue_name) = lower(f.flow_slug)
        group by f.flow_slug) q
),

-- Active messages no pgflow task claims: the upgrade cannot give them an identity. Every queue
-- has its own table (pgmq.q_<queue>), which a static query cannot name, so query_to_xml() runs
-- the per-queue SELECT (it only reads; no function or statement needs creating). The CASE
-- keeps it away from queues whose tables are missing.
queue_messages as (
  select q.flow_slug, q.queue,
         case when q.state = 'usable' then query_to_xml(format(
           'select count(*) as n,
                   string_agg(q.msg_id::text, '', '' order by q.msg_id) filter (where q.r <= 5) as sample
            from (select q.msg_id, row_number() over (order by q.msg_id) as r from pgmq.%I q
                  where not exists (select 1 from pgflow.step_tasks t
                                    where lower(t.flow_slug) = %L and t.message_id = q.msg_id)) q',
           'q_' || q.queue, q.queue), false, true, '') end as found
  from flow_queue q
),
unmatched as (
  select m.flow_slug, m.queue,
         (xpath('/row/n/text()', m.found))[1]::text::bigint as n,
         (xpath('/row/sample/text()', m.found))[1]::text as sample
  from queue_messages m
  where m.found is not null
),

-- Installed copies of the optional, manually installed pruning helper (it reads queues by
-- flow slug), and whether each is the stock pre-queue-identity version.
prune_helper as (
  select md5(p.prosrc) = 'c0f88f3fe24314bb6f00435208e4d8fc' as stock
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'pgflow' and p.proname = 'prune_data_older_than'
),

report (severity, category, flow_slug, step_slug, detail, repair_hint) as (
  select 'error', 'invalid_flow_slug', p.flow_slug, null::text,
         format('flow slug "%s" %s', p.flow_slug, p.problem),
         'create the flow under a compliant slug (a new version), move producers to it, then delete the old flow with pgflow.delete_flow_and_data()'
  from slug_problem p where p.step_slug is null and p.problem is not null

  union all
  select 'error', 'invalid_step_slug', p.flow_slug, p.step_slug,
         format('step slug "%s" of flow "%s" %s', p.step_slug, p.flow_slug, p.problem),
         'rename the step in a new flow version; flow definitions are immutable'
  from slug_problem p where p.step_slug is not null and p.problem is not null

  union all
  select 'error', 'flow_queue_name_too_long', f.flow_slug, null::text,
         format('queue name "%s" would be %s characters; PGMQ allows 47', lower(f.flow_slug),
                length(f.flow_slug)),
         'create the flow under a slug of at most 47 characters'
  from pgflow.flows f where length(f.flow_slug) > 47

  union all
  select 'error', 'case_conflict_flow', f.flow_slug, null::text,
         format('flow slug "%s" differs only in case from %s', f.flow_slug,
                string_agg(format('"%s"', o.flow_slug), ', ' order by o.flow_slug)),
         'keep one of these flows; recreate the others under distinct slugs'
  from pgflow.flows f
  join pgflow.flows o on lower(o.flow_slug) = lower(f.flow_slug) and o.flow_slug <> f.flow_slug
  group by f.flow_slug

  union all
  select 'error', 'case_conflict_step', s.flow_slug, s.step_slug,
         format('step slug "%s" differs only in case from %s in flow "%s"', s.step_slug,
                string_agg(format('"%s"', o.step_slug), ', ' order by o.step_slug), s.flow_slug),
         'recreate the flow as a new version with distinct step slugs'
  from pgflow.steps s
  join pgflow.steps o on o.flow_slug = s.flow_slug and lower(o.step_slug) = lower(s.step_slug)
                     and o.step_slug <> s.step_slug
  group by s.flow_slug, s.step_slug

  union all
  select 'error', 'queue_missing', q.flow_slug, null::text,
         format('flow "%s" has no PGMQ queue "%s" in pgmq.meta', q.flow_slug, q.queue),
         'recreate the queue with pgmq.create() if its tables still exist, or delete the flow'
  from flow_queue q where q.state = 'missing'

  union all
  select 'error', 'queue_ambiguous', q.flow_slug, null::text,
         format('pgmq.meta has %s rows for the same tables of queue "%s" of flow "%s": %s',
                q.meta_count, q.queue, q.flow_slug, q.meta_names),
         'keep one pgmq.meta row per queue: delete the alias rows (the tables are shared)'
  from flow_queue q where q.state = 'ambiguous'

  union all
  select 'error', 'queue_malformed', q.flow_slug, null::text,
         format('queue %s of flow "%s" lacks table pgmq.q_%s or pgmq.a_%s', q.meta_names,
                q.flow_slug, q.queue, q.queue),
         'recreate the missing table (drop and recreate the queue when it holds no active work)'
  from flow_queue q where q.state = 'malformed'

  union all
  select 'error', 'unmatched_active_message', u.flow_slug, null::text,
         format('%s active message(s) in queue "%s" of flow "%s" match no task (e.g. msg_id %s)',
                u.n, u.queue, u.flow_slug, u.sample),
         'find who sent them (applications must not send to pgflow queues); archive or delete them with pgmq.archive()/pgmq.delete()'
  from unmatched u where u.n > 0

  union all
  -- (queue, message id) must identify one task.
  select 'error', 'duplicate_message_identity', min(d.flow_slug), null::text,
         format('%s message id(s) of queue "%s" of flow "%s" are shared by several tasks (e.g. msg_id %s)',
                count(*), d.queue, min(d.flow_slug),
                string_agg(d.message_id::text, ', ' order by d.message_id) filter (where d.n <= 5)),
         'inspect those step_tasks rows; delete the runs that hold the duplicates (pgflow cannot tell which task owns the message)'
  from (select lower(t.flow_slug) as queue, min(t.flow_slug) as flow_slug, t.message_id,
               row_number() over (partition by lower(t.flow_slug) order by t.message_id) as n
        from pgflow.step_tasks t where t.message_id is not null
        group by lower(t.flow_slug), t.message_id having count(*) > 1) d
  group by d.queue

  union all
  -- What the backfill will do.
  select 'info', 'backfill', null::text, null::text,
         format('%s step(s) and %s task(s) (%s without a queue message) get queue_name = lower(flow_slug)',
                (select count(*) from pgflow.steps), (select count(*) from pgflow.step_tasks),
                (select count(*) from pgflow.step_tasks t where t.message_id is null)),
         null::text

  union all
  select 'action', 'prune_function_installed', null::text, null::text,
         case when h.stock
           then 'pgflow.prune_data_older_than(interval) is the stock pre-queue-identity version'
           else 'pgflow.prune_data_older_than(interval) is installed and differs from the stock version (customized?)' end,
         case when h.stock
           then 'after upgrading, replace it: psql -f share/pgflow/sql/contrib/prune_data_older_than.sql'
           else 'adapt it by hand: archive pruning must enumerate each flow''s queues (steps.queue_name) and task rows carry queue_name; see sql/contrib/prune_data_older_than.sql' end
  from prune_helper h
)
select r.severity, r.category, r.flow_slug, r.step_slug, r.detail, r.repair_hint
from report r
order by case r.severity when 'error' then 0 when 'action' then 1 else 2 end,
         r.category, r.flow_slug, r.step_slug;
