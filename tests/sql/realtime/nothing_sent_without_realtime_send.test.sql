-- Without realtime.send(jsonb, text, text, boolean) nothing is sent to realtime and every
-- function works; a function of another signature is not called; removing the stub stops sends.
begin;
select plan(5);

select pgflow_tests.setup_flow('sequential');
select lives_ok($$select pgflow.start_flow('sequential', '{}')$$, 'start_flow works without a realtime schema');
select results_eq($$select step_slug, status from pgflow_tests.poll_and_complete('sequential')$$,
                  $$values ('first', 'completed')$$, 'claims and completions work too');

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
drop function realtime.send(jsonb, text, text, boolean);
select pgflow.start_flow('sequential', '{}');
select is((select count(*) from realtime.messages), 2::bigint, 'after dropping it nothing more is recorded');

select * from finish();
rollback;
