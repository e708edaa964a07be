-- Included by the tests of this folder (\i _install_as_owner.sql), inside their transaction.
--
-- The test template is migrated by the superuser, under which no privilege problem can show.
-- This makes a plain role, grants_owner (NOSUPERUSER, CREATEROLE: what a managed server's
-- admin role looks like), the owner of everything in schemas pgflow and pgmq, as if it had run
-- `pgflow migrate`; the SECURITY DEFINER functions then run with its rights only. Tests run
-- the grant script as that role:
--     set role grants_owner;
--     \i ../../../sql/contrib/grants.sql
--     reset role;
-- With the pgmq extension (the test command's extension pass), grants_owner also becomes the
-- extension's owner, as the role whose `pgflow migrate` created it would be (PostgreSQL has no
-- ALTER EXTENSION ... OWNER, so the superuser sets it in the catalog).
-- Also defines pg_temp.owned_by(role): every object the role owns in this database.
create role grants_owner nologin createrole;

do $$
declare
  r record;
begin
  execute 'alter schema pgflow owner to grants_owner';
  execute 'alter schema pgmq owner to grants_owner';
  update pg_extension set extowner = 'grants_owner'::regrole where extname = 'pgmq';
  for r in select c.oid::regclass as rel from pg_class c
           where c.relnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
             and c.relkind in ('r', 'p') loop
    execute format('alter table %s owner to grants_owner', r.rel);  -- with indexes, sequences
  end loop;
  for r in select p.oid::regprocedure as fn from pg_proc p
           where p.pronamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace) loop
    execute format('alter routine %s owner to grants_owner', r.fn);
  end loop;
  for r in select t.oid::regtype as typ from pg_type t
           where t.typnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
             and t.typtype = 'c' and (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c' loop
    execute format('alter type %s owner to grants_owner', r.typ);
  end loop;
end
$$;

create function pg_temp.owned_by(p_role name) returns setof text
language sql stable as $$
  select 'schema ' || n.nspname from pg_namespace n where n.nspowner = p_role::regrole
  union all
  select 'relation ' || c.oid::regclass from pg_class c where c.relowner = p_role::regrole
  union all
  select 'function ' || p.oid::regprocedure from pg_proc p where p.proowner = p_role::regrole
  union all
  select 'type ' || t.oid::regtype from pg_type t where t.typowner = p_role::regrole
  order by 1
$$;
