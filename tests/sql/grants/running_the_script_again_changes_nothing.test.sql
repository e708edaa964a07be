-- The script is idempotent: a second run by the owner, and a third by a superuser, leave every
-- privilege-related catalog entry exactly as the first run left it (roles and their
-- attributes, memberships and comments; ACLs of schemas, tables, columns and functions;
-- SECURITY DEFINER flags and settings; default privileges) and create no role.
begin;
select plan(5);

\i _install_as_owner.sql
-- A flow with its queue exists before the first run, so queue grants are part of the state.
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset
set role grants_owner;
select pgflow.ensure_flow_compiled('grants_again', :'shape'::jsonb, pgflow.worker_protocol())->>'status' as compiled;
reset role;

create function pg_temp.privilege_state() returns setof text language sql stable as $$
  select format('role %s login=%s super=%s createrole=%s inherit=%s comment=%s', r.rolname,
                r.rolcanlogin, r.rolsuper, r.rolcreaterole, r.rolinherit,
                shobj_description(r.oid, 'pg_authid'))
  from pg_roles r where r.rolname like 'pgflow%'
  union all
  select format('member %s of %s admin=%s', m.member::regrole, m.roleid::regrole, m.admin_option)
  from pg_auth_members m
  where m.member in (select oid from pg_roles where rolname like 'pgflow%' or rolname like 'grants%')
     or m.roleid in (select oid from pg_roles where rolname like 'pgflow%')
  union all
  select format('schema %s acl=%s', n.nspname, (select array_agg(a order by a::text) from unnest(n.nspacl) a))
  from pg_namespace n where n.nspname in ('pgflow', 'pgmq', 'public')
  union all
  select format('relation %s acl=%s', c.oid::regclass, (select array_agg(a order by a::text) from unnest(c.relacl) a))
  from pg_class c where c.relnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
  union all
  select format('column %s.%s acl=%s', c.oid::regclass, att.attname,
                (select array_agg(a order by a::text) from unnest(att.attacl) a))
  from pg_attribute att join pg_class c on c.oid = att.attrelid
  where c.relnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace) and att.attacl is not null
  union all
  select format('function %s definer=%s config=%s acl=%s', p.oid::regprocedure, p.prosecdef, p.proconfig,
                (select array_agg(a order by a::text) from unnest(p.proacl) a))
  from pg_proc p where p.pronamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
  union all
  select format('default %s %s %s acl=%s', d.defaclrole::regrole, d.defaclnamespace, d.defaclobjtype,
                (select array_agg(a order by a::text) from unnest(d.defaclacl) a))
  from pg_default_acl d
  order by 1
$$;

create temp table state (run int, entry text);
grant all on state to public;

set role grants_owner;
\i ../../../sql/contrib/grants.sql
insert into state select 1, s from pg_temp.privilege_state() s;
\i ../../../sql/contrib/grants.sql
insert into state select 2, s from pg_temp.privilege_state() s;
reset role;
\i ../../../sql/contrib/grants.sql
insert into state select 3, s from pg_temp.privilege_state() s;

select cmp_ok((select count(*) from state where run = 1 and entry like '%pgflow_worker%'), '>', 20::bigint,
              '(the first run granted: the state covers it)');
select is_empty($$(select entry from state where run = 1 except select entry from state where run = 2)
                  union all
                  (select entry from state where run = 2 except select entry from state where run = 1)$$,
                'a second run by the owner changes nothing');
select is_empty($$(select entry from state where run = 1 except select entry from state where run = 3)
                  union all
                  (select entry from state where run = 3 except select entry from state where run = 1)$$,
                'a third run by a superuser changes nothing');
select is((select count(*) from state where run = 3), (select count(*) from state where run = 1),
          'no entry was duplicated');
select is((select count(*) from pg_roles where rolname like 'pgflow%'), 2::bigint, 'and it still made only two roles');

select * from finish();
rollback;
