-- is_local() is true only when the setting pgflow.local is on (true, 1 and yes also count);
-- upstream's Supabase jwt_secret rule no longer decides anything.
begin;
select plan(9);

set local pgflow.local = 'on';
select is(pgflow.is_local(), true, 'on');
set local pgflow.local = 'ON';
select is(pgflow.is_local(), true, 'case-insensitive');
set local pgflow.local = 'true';
select is(pgflow.is_local(), true, 'true');
set local pgflow.local = '1';
select is(pgflow.is_local(), true, '1');
set local pgflow.local = 'off';
select is(pgflow.is_local(), false, 'off');
set local pgflow.local = '';
select is(pgflow.is_local(), false, 'empty');
set local pgflow.local = 'maybe';
select is(pgflow.is_local(), false, 'anything else');
set local app.settings.jwt_secret = 'super-secret-jwt-token-with-at-least-32-characters-long';
select is(pgflow.is_local(), false, 'the Supabase CLI jwt_secret does not make a database local');
reset pgflow.local;
select is(pgflow.is_local(), true, 'the test cluster itself is local (pgflow.local = on in postgresql.conf)');

select * from finish();
rollback;
