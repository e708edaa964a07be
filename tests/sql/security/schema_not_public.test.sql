-- USAGE on schema pgflow is revoked from PUBLIC: a role without grants cannot call the API.
begin;
select plan(3);

select is(has_schema_privilege('public', 'pgflow', 'USAGE'), false, 'PUBLIC has no USAGE on pgflow');
select is((select count(*) from pg_namespace n, aclexplode(n.nspacl) a
           where n.nspname = 'pgflow' and a.grantee = 0), 0::bigint, 'no ACL entry for PUBLIC');

create role pgflow_test_nobody nologin;
set local role pgflow_test_nobody;
select throws_ok($$select pgflow.is_valid_slug('x')$$, '42501', 'permission denied for schema pgflow',
                 'an ungranted role is refused');
reset role;

select * from finish();
rollback;
