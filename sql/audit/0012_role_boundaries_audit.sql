-- pgflow 0012 (role boundaries): read-only pre-upgrade audit.
--
-- Run against a database at schema version 0011 BEFORE upgrading (or use `pgflow audit`):
--     psql "$DATABASE_URL" -f share/pgflow/sql/audit/0012_role_boundaries_audit.sql
-- One plain SELECT: it creates and writes nothing, so it also runs in a read-only transaction
-- and on a hot standby. One row per finding:
--   error   the upgrade will refuse until this is resolved
--   action  do this (before or after upgrading)
--   info    what the upgrade will do
-- The migration's preflight (sql/migrations/0012_role_boundaries.sql) runs the same two error
-- checks, worded exactly as here.

with
-- Each step's own queue: the flow's generated queue, or the step's private queue in queue mode
-- `step`. pgflow never writes another; before 0012 a worker role could (INSERT on steps).
step_route as (
  select s.flow_slug, s.step_slug, s.queue_name,
         case when f.queue_mode = 'step'
              then pgflow._step_queue_name(s.flow_slug, s.step_slug, s.step_index)
              else lower(s.flow_slug) end as own_queue
  from pgflow.steps s join pgflow.flows f on f.flow_slug = s.flow_slug
),
report as (
  select 'error' as severity, 'step_off_route' as category, r.flow_slug, r.step_slug,
         format('step "%s" of flow "%s" routes to queue "%s", not to its own queue "%s"',
                r.step_slug, r.flow_slug, r.queue_name, r.own_queue) as detail,
         'pgflow never writes such a step: a worker role could, before this version. Find out who did, then delete the flow (pgflow.delete_flow_and_data) or the step''s rows' as repair_hint
  from step_route r
  where r.queue_name is distinct from r.own_queue

  union all
  select 'error', 'task_off_route', s.flow_slug, s.step_slug,
         format('%s task(s) of step "%s" of flow "%s" name queue "%s", not their step''s queue "%s"',
                count(*), s.step_slug, s.flow_slug, t.queue_name, s.queue_name),
         'pgflow never writes such a task: a worker role could, before this version. Find out who did, then delete those runs'
  from pgflow.step_tasks t
  join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  where t.queue_name <> s.queue_name
  group by s.flow_slug, s.step_slug, t.queue_name, s.queue_name

  union all
  select 'action', 'revoke_temporary', null::text, null::text,
         format('PUBLIC may create temporary objects in database %s, which lets any login run code as the owner of pgflow''s SECURITY DEFINER functions until this upgrade (docs/security.md)',
                current_database()),
         format('until upgraded: revoke temporary on database %I from public;', current_database())
  where has_database_privilege('public', current_database(), 'TEMPORARY')

  union all
  select 'action', 'rerun_grants', null::text, null::text,
         'the roles of sql/contrib/grants.sql exist: the worker API becomes SECURITY DEFINER and the worker role loses its table writes only when the script runs again',
         'after upgrading: psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -1 -f share/pgflow/sql/contrib/grants.sql (as the owner); until then workers in pgflow_worker fail with "permission denied for function ..."'
  where exists (select 1 from pg_roles where rolname = 'pgflow_worker')

  union all
  select 'info', 'search_path', null::text, null::text,
         format('%s function(s) of schema pgflow%s get search_path = pg_catalog, pg_temp',
                (select count(*) from pg_proc where pronamespace = 'pgflow'::regnamespace),
                case when coalesce(obj_description('pgmq'::regnamespace, 'pg_namespace'), '') like 'pgflow bundled PGMQ%'
                          and not exists (select 1 from pg_extension where extname = 'pgmq')
                     then format(' and %s of the bundled PGMQ layer',
                                 (select count(*) from pg_proc where pronamespace = 'pgmq'::regnamespace))
                     else '' end),
         null::text
)
select r.severity, r.category, r.flow_slug, r.step_slug, r.detail, r.repair_hint
from report r
order by case r.severity when 'error' then 0 when 'action' then 1 else 2 end,
         r.category, r.flow_slug, r.step_slug;
