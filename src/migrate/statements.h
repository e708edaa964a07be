// Every statement the migration runner sends besides the migrations themselves, by name
// (migrate.cc and adopt.cc use them; nothing splices SQL text).
#ifndef PGFLOW_MIGRATE_STATEMENTS_H_
#define PGFLOW_MIGRATE_STATEMENTS_H_

#include <string_view>

namespace pgflow::internal {

// ---- the ledger ----
// Only what is missing is created: a migrate with nothing to do runs no DDL (which would need
// CREATE on the database, own the ledger and lock it, even to change nothing).
inline constexpr std::string_view kCreateLedger = R"sql(
do $ledger$
begin
  if to_regclass('pgflow.schema_migrations') is null then
    create schema if not exists pgflow;
    create table pgflow.schema_migrations (
      version    integer primary key check (version > 0),
      name       text not null,
      checksum   text not null,
      applied_at timestamptz not null default now()
    );
    comment on table pgflow.schema_migrations is
      'Ledger of pgflow migrations applied by the pgflow migration runner';
  end if;
  -- true: 0001 was not applied but an existing schema verified equal to it
  -- (MigrateOptions::adopt_existing_schema)
  if not exists (select 1 from pg_catalog.pg_attribute
                 where attrelid = 'pgflow.schema_migrations'::regclass and attname = 'adopted'
                   and not attisdropped) then
    alter table pgflow.schema_migrations add column adopted boolean not null default false;
  end if;
end
$ledger$;
)sql";
inline constexpr char kLedgerExists[] =
    "select to_regclass('pgflow.schema_migrations') is not null";
// (a ledger written before `adopted` existed has no such column until migrate)
inline constexpr char kReadLedger[] =
    "select version, name, checksum, to_jsonb(applied_at) #>> '{}', "
    "coalesce((to_jsonb(m) ->> 'adopted')::boolean, false) from pgflow.schema_migrations m order "
    "by version";
inline constexpr char kRecordMigration[] =
    "insert into pgflow.schema_migrations (version, name, checksum, adopted) values ($1, $2, $3, "
    "$4)";
// Whether there is a ledger, and whether there is a pgflow schema at all.
inline constexpr char kLedgerAndSchema[] =
    "select to_regclass('pgflow.schema_migrations') is not null, to_regclass('pgflow.flows') is "
    "not null";
inline constexpr char kLedgerHasRows[] = "select exists (select 1 from pgflow.schema_migrations)";

// ---- Supabase broadcasts ----
// The rule of pgflow._emit_events (0027), asked as pgflow's owner (the owner of its SECURITY
// DEFINER functions) would be: every realtime.send owned by a role with that owner's privileges.
inline constexpr std::string_view kRealtime = R"sql(
with owner as (select p.proowner as oid from pg_catalog.pg_proc p
               join pg_catalog.pg_namespace n on n.oid = p.pronamespace
               where n.nspname = 'pgflow' and p.proname = 'complete_tasks' limit 1),
     sends as (select p.proowner, p.proargtypes from pg_catalog.pg_proc p
               join pg_catalog.pg_namespace n on n.oid = p.pronamespace
               where n.nspname = 'realtime' and p.proname = 'send'),
     untrusted as (select distinct pg_catalog.pg_get_userbyid(s.proowner) as name
                   from sends s, owner o
                   where not pg_catalog.pg_has_role(s.proowner, o.oid, 'USAGE'))
select case
  when not exists (select 1 from owner)
       or not exists (select 1 from sends where proargtypes = '3802 25 25 16'::pg_catalog.oidvector)
    then 'off'
  when exists (select 1 from untrusted)
    then 'untrusted (owned by ' || (select string_agg(name, ', ' order by name) from untrusted) || ')'
  else 'on'
end
)sql";

// ---- PGMQ ----
inline constexpr std::string_view kPgmqMode = R"sql(
select case
  when exists (select 1 from pg_extension where extname = 'pgmq')
    then 'extension ' || (select extversion from pg_extension where extname = 'pgmq')
  when to_regnamespace('pgmq') is null then 'missing'
  when coalesce(obj_description(to_regnamespace('pgmq'), 'pg_namespace'), '')
       like 'pgflow bundled PGMQ%' then 'bundled'
  else 'external'
end
)sql";
inline constexpr char kPgmqExtensionAvailable[] =
    "select exists (select 1 from pg_available_extensions where name = 'pgmq')";
inline constexpr char kCreatePgmqExtension[] = "create extension if not exists pgmq";

// ---- the migrators' lock ----
// The advisory lock each transaction of a migrator takes first (0x64654111ec77,
// docs/upgrading.md). Transaction-scoped, like every setting below: migrate keeps nothing in
// its session, so it works through a transaction pooler.
inline constexpr char kMigrateLockKey[] = "110386046168183";
inline constexpr char kSetLocalLockTimeout[] = "select set_config('lock_timeout', $1, true)";
// The first statement of each of migrate's transactions, whatever the role's or database's
// default: under REPEATABLE READ or SERIALIZABLE the snapshot would be taken before the wait for
// the lock, and the ledger and a migration's reads under its table locks would miss what
// committed meanwhile.
inline constexpr char kReadCommitted[] = "set transaction isolation level read committed";
inline constexpr char kTakeMigrateLock[] = "select pg_advisory_xact_lock($1::bigint)";

// ---- adopting a schema installed by upstream's tooling (adopt.cc) ----
// Where the existing schema waits while 0001 is built next to it for comparison; the renames
// below spell the same name.
inline constexpr char kAdopting[] = "pgflow_adopting";
inline constexpr char kSchemaExists[] = "select to_regnamespace($1) is not null";
inline constexpr char kRenamePgflowAside[] = "alter schema pgflow rename to pgflow_adopting";
inline constexpr char kRenameAdoptedBack[] = "alter schema pgflow_adopting rename to pgflow";
inline constexpr char kDropPgflow[] = "drop schema pgflow cascade";
// Definitions dumped under an empty path name every schema they use.
inline constexpr char kEmptySearchPath[] = "set local search_path = ''";
inline constexpr char kNoFunctionBodyChecks[] = "set local check_function_bodies = off";
// Every object of schema $1 that 0001 defines the shape of, as (kind, name, definition), with
// the schema's own name written as "pgflow." so that the two schemas compare equal. Run with
// an empty search_path, so every definition names its schemas.
inline constexpr char kCatalog[] = R"sql(
select kind, replace(name, $1 || '.', 'pgflow.'), replace(def, $1 || '.', 'pgflow.') from (
  select 'table' as kind, c.relname::text as name, c.relkind::text as def
  from pg_class c where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
  union all
  -- (a composite type's fields are filled by position: their order counts too)
  select 'column', c.relname || '.' || a.attname,
         format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
           || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
           || case when c.relkind = 'c'
                   then ' at position ' || row_number() over (partition by c.oid order by a.attnum) else '' end
  from pg_class c
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
  where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c')
  union all
  select 'constraint', c.relname || '.' || k.conname, pg_get_constraintdef(k.oid)
  from pg_constraint k join pg_class c on c.oid = k.conrelid
  where c.relnamespace = $1::regnamespace
  union all
  select 'index', i.relname, pg_get_indexdef(i.oid)
  from pg_index x join pg_class i on i.oid = x.indexrelid
  where i.relnamespace = $1::regnamespace
  union all
  select 'trigger', c.relname || '.' || g.tgname, pg_get_triggerdef(g.oid)
  from pg_trigger g join pg_class c on c.oid = g.tgrelid
  where c.relnamespace = $1::regnamespace and not g.tgisinternal
  union all
  select 'type', t.typname, t.typtype::text
  from pg_type t left join pg_class c on c.oid = t.typrelid
  where t.typnamespace = $1::regnamespace and t.typtype in ('c', 'e', 'd')
    and (t.typtype <> 'c' or c.relkind = 'c')
  union all
  select 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
         pg_get_function_result(p.oid)
  from pg_proc p where p.pronamespace = $1::regnamespace
) o
)sql";
// The definitions and signatures of pgflow's functions.
inline constexpr char kFunctionDefinitions[] =
    "select pg_get_functiondef(p.oid), p.oid::regprocedure::text from pg_proc p "
    "where p.pronamespace = 'pgflow'::regnamespace order by p.oid";
// REVOKE statements for grants others than PUBLIC and the owner hold on the SECURITY DEFINER
// functions among $1 (a JSON array of signatures).
inline constexpr char kForeignDefinerGrants[] =
    "select format('revoke execute on function %s from %s', p.oid::regprocedure, "
    "a.grantee::regrole) "
    "from pg_proc p, aclexplode(p.proacl) a "
    "where p.oid in (select f::regprocedure from jsonb_array_elements_text($1::jsonb) f) and "
    "p.prosecdef "
    "and a.grantee not in (0, p.proowner) and a.privilege_type = 'EXECUTE'";

}  // namespace pgflow::internal

#endif  // PGFLOW_MIGRATE_STATEMENTS_H_
