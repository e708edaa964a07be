-- pgflow.notify_events = off silences channel pgflow_events for the transactions that see it
-- (set per session here; per database or role in production), and nothing else: the worker
-- wake-up on "pgflow_queue:<queue>" is still sent, and a session without the setting still
-- publishes events. A listener sees run:started of the run started with events on and nothing
-- of the run started with them off (notifications arrive in commit order, so once the later
-- run's event is there, the earlier one would have been too). Commits for real.
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select dblink_connect('listener', pgflow_tests.dblink_connstr());
select dblink_exec('listener', 'listen pgflow_events');
select dblink_exec('listener', 'listen "pgflow_queue:f"');

set pgflow.notify_events = off;
select run_id as quiet_run from pgflow.start_flow('f', '{}') \gset
reset pgflow.notify_events;
select run_id as loud_run from pgflow.start_flow('f', '{}') \gset

create temp table heard (channel text, payload text);
do $$
begin
  for i in 1..500 loop
    insert into heard select n.notify_name, n.extra from dblink_get_notify('listener') n;
    exit when exists (select 1 from heard where payload like '%run:started%');
    perform pg_sleep(0.01);
  end loop;
end $$;

begin;
select plan(4);
select ok(exists (select 1 from heard where channel = 'pgflow_events' and payload::jsonb->>'run_id' = :'loud_run'
                  and payload::jsonb->>'event' = 'run:started'),
          'a run started with events on publishes run:started');
select is_empty(format($$select * from heard where channel = 'pgflow_events' and payload like '%%%s%%'$$, :'quiet_run'),
                'a run started with pgflow.notify_events = off publishes nothing on pgflow_events');
select is((select count(*) from heard where channel = 'pgflow_queue:f'), 2::bigint,
          'both starts woke the queue''s workers');
select results_eq(format($$select status from pgflow.runs where run_id = %L$$, :'quiet_run'), $$values ('started')$$,
                  'and the quiet run started like the other');
select * from finish();
rollback;
select dblink_disconnect('listener');
