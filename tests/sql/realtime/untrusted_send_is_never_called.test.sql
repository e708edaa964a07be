-- Since 0027 realtime.send is called only when every function named realtime.send is owned by a
-- role that has the current user's privileges (pgflow's owner, inside the SECURITY DEFINER
-- functions; a superuser passes). Before, a role with nothing but CREATE on the database could
-- create schema realtime and a send() that then ran as pgflow's owner, with every payload.
begin;
select plan(7);

create role rt_untrusted nologin;
select format('grant create on database %I to rt_untrusted', current_database()) \gexec

-- The untrusted role plants schema realtime and its own send, which records whose rights it ran
-- with (as pgflow's owner, it could do anything that owner may).
set role rt_untrusted;
create schema realtime;
create table realtime.stolen (run_user name, payload jsonb);
create function realtime.send(payload jsonb, event text, topic text, private boolean default true)
returns void language sql as 'insert into realtime.stolen values (current_user, payload)';
reset role;

select pgflow_tests.setup_flow('sequential');
select lives_ok($$select pgflow.start_flow('sequential', '{"secret": 1}')$$,
                'start_flow works with an untrusted realtime.send');
select results_eq($$select step_slug, status from pgflow_tests.poll_and_complete('sequential')$$,
                  $$values ('first', 'completed')$$, 'claims and completions work too');
select is((select count(*) from realtime.stolen), 0::bigint,
          'a send owned by a role without the owner''s privileges is never called');

-- Owned by a superuser (as Supabase's, owned by supabase_admin), the same function is called.
alter function realtime.send(jsonb, text, text, boolean) owner to current_user;
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.stolen), 2::bigint,
          'once a superuser owns it, it is called: run:started and step:first:started');

-- An untrusted overload beside a trusted send (one with defaults could make the call
-- ambiguous, or be chosen) stops every broadcast.
set role rt_untrusted;
create function realtime.send(payload jsonb, event text, topic text, private boolean, extra int default 0)
returns void language sql as 'insert into realtime.stolen values (current_user, payload)';
reset role;
select lives_ok($$select pgflow.start_flow('sequential', '{}')$$, 'start_flow works beside an untrusted overload');
select is((select count(*) from realtime.stolen), 2::bigint, 'and nothing is sent: no send is called');

-- Dropping the overload restores the trusted broadcast.
drop function realtime.send(jsonb, text, text, boolean, int);
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.stolen), 4::bigint, 'without it the trusted send is called again');

select * from finish();
rollback;
