-- Without realtime.send(jsonb, text, text, boolean) nothing is sent to realtime and every
-- function works; a function of another signature is not called; removing the stub stops sends.
-- Without it, the broadcast payloads (inputs and outputs: large values cost seconds each) are
-- not even built (since 0014): their builders are never called.
begin;
select plan(7);
set local track_functions = 'all';  -- (pg_stat_xact_user_functions counts this transaction's calls)
create function pg_temp.payload_builds() returns bigint language sql as $$
  select coalesce(sum(calls), 0)::bigint from pg_stat_xact_user_functions
  where schemaname = 'pgflow' and funcname in ('_run_event_details', '_step_event_details')
$$;

select pgflow_tests.setup_flow('sequential');
select lives_ok($$select pgflow.start_flow('sequential', '{}')$$, 'start_flow works without a realtime schema');
select results_eq($$select step_slug, status from pgflow_tests.poll_and_complete('sequential')$$,
                  $$values ('first', 'completed')$$, 'claims and completions work too');
select is(pg_temp.payload_builds(), 0::bigint, 'no broadcast payload was built for their events');

-- A look-alike with another signature is ignored.
create schema realtime;
create table realtime.calls (event text);
create function realtime.send(payload jsonb, event text, topic text) returns void
language sql as 'insert into realtime.calls values (event)';
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.calls), 0::bigint, 'realtime.send(jsonb, text, text) is not called');
drop function realtime.send(jsonb, text, text);

select pgflow_tests.install_realtime_stub();
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.messages), 2::bigint, 'with the stub: run:started and step:first:started');
select is(pg_temp.payload_builds(), 2::bigint, 'and a payload was built for each');
drop function realtime.send(jsonb, text, text, boolean);
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.messages), 2::bigint, 'after dropping it nothing more is recorded');

select * from finish();
rollback;
