-- Fair shares (since 0019): a concurrency key shares a limit's slots among the key's values
-- (tenants) in turns, whatever their backlog (stride order: lowest pass, then served longest
-- ago); a key limit caps one value; weights give a value more slots in proportion; priority
-- orders a value's own tasks; the flow's key counts across its steps. The key and weight come
-- from the run input when a task is queued.
-- (SET CONSTRAINTS ALL IMMEDIATE admits at the end of each statement instead of at commit.)
begin;
select plan(21);
set constraints all immediate;

create function pg_temp.compile(p_flow text, p_control jsonb, p_steps text[] default array['work']) returns text
language sql as $$
  select pgflow.ensure_flow_compiled(p_flow, jsonb_build_object('steps',
           (select jsonb_agg(pgflow_tests.step_shape(s)) from unnest(p_steps) s)),
         pgflow.worker_protocol(), 'flow', null, null, p_control)->>'status'
$$;
-- The key values of a flow's tasks holding a slot, with how many each holds.
create function pg_temp.admitted(p_flow text) returns text language sql as $$
  select coalesce(string_agg(k || ':' || n, ' ' order by k), '')
  from (select concurrency_key as k, count(*) as n from pgflow.step_tasks
        where flow_slug = p_flow and gate = 'admitted' and status in ('queued', 'started') group by 1) x
$$;
-- Completes the oldest admitted task of a flow (of one key value when given).
create function pg_temp.complete_one(p_flow text, p_key text default null) returns void language plpgsql as $$
declare
  v record;
begin
  select t.run_id, t.step_slug, t.task_index into v from pgflow.step_tasks t
  where t.flow_slug = p_flow and t.gate = 'admitted' and t.status = 'queued'
    and (p_key is null or t.concurrency_key = p_key)
  order by t.queued_at, t.run_id limit 1;
  perform pgflow_tests.start_task(v.run_id, v.step_slug, v.task_index);
  perform pgflow.complete_task(v.run_id, v.step_slug, v.task_index, '{}');
end;
$$;

-- Round robin: a tenant with a backlog does not keep the slots from one that comes later.
select pg_temp.compile('fair', '{"steps": {"work": {"concurrencyLimit": 2, "concurrencyKey": {"path": ["tenant"]}}}}');
select count(*) from (select pgflow.start_run('fair', '{"tenant": "a"}') from generate_series(1, 6)) s;
select count(*) from (select pgflow.start_run('fair', '{"tenant": "b"}') from generate_series(1, 2)) s;
select is(pg_temp.admitted('fair'), 'a:2', 'tenant a''s first two tasks take both slots');
select pg_temp.complete_one('fair', 'a');
select is(pg_temp.admitted('fair'), 'a:2', 'b joins level with a, at a later turn: a, waiting since before, goes first once');
select pg_temp.complete_one('fair', 'a');
select is(pg_temp.admitted('fair'), 'a:1 b:1', 'then b, though a''s backlog is older and larger');
select pg_temp.complete_one('fair', 'a');
select is(pg_temp.admitted('fair'), 'a:1 b:1', 'then they take turns: a');
select pg_temp.complete_one('fair', 'b');
select is(pg_temp.admitted('fair'), 'a:1 b:1', 'b');
select pg_temp.complete_one('fair', 'b');
select is(pg_temp.admitted('fair'), 'a:2', 'a tenant without waiting tasks leaves its slot to the others');
select results_eq($$select distinct concurrency_key, key_weight from pgflow.step_tasks where flow_slug = 'fair' order by 1$$,
                  $$values ('a'::text, 1::real), ('b', 1)$$, 'tasks carry their run''s key value and the default weight 1');

-- Under a limit of 1 (each start admits at its own statement's end here): a value that joins
-- starts level with the others but after those waiting since an earlier turn; then values take
-- turns.
select pg_temp.compile('single', '{"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"]}}');
select count(*) from (select pgflow.start_run('single', jsonb_build_object('tenant', t))
                      from unnest(array['a', 'a', 'a', 'a', 'b', 'b', 'c']) t) s;
create function pg_temp.turns_taken(p_flow text, p_count int) returns text language plpgsql as $$
declare
  v_order text[] := array[pg_temp.admitted(p_flow)];
begin
  for i in 2..p_count loop
    perform pg_temp.complete_one(p_flow);
    v_order := v_order || pg_temp.admitted(p_flow);
  end loop;
  return array_to_string(v_order, ' ');
end;
$$;
select is(pg_temp.turns_taken('single', 7), 'a:1 a:1 b:1 c:1 a:1 b:1 a:1',
          'a (waiting since before b and c joined, level with it) goes twice, then b, c and a take turns');
select results_eq($$select scope, key, pass is not null from pgflow.concurrency_keys where flow_slug = 'single' order by key$$,
                  $$values (''::text, 'a'::text, true), ('', 'b', true), ('', 'c', false)$$,
                  'a value found with nothing waiting goes idle (the flow''s key: scope '''')');
select pgflow._admit_waiting_tasks();
select results_eq($$select key from pgflow.concurrency_keys where flow_slug = 'single' order by key$$, $$values ('a'::text), ('b')$$,
                  'stall recovery''s sweep deletes idle values');

-- A key limit caps one value even when the limit has room.
select pg_temp.compile('capped', '{"concurrencyLimit": 3, "concurrencyKey": {"path": ["tenant"], "limit": 1}}');
select count(*) from (select pgflow.start_run('capped', '{"tenant": "a"}') from generate_series(1, 3)) s;
select is(pg_temp.admitted('capped'), 'a:1', 'a key limit of 1 admits one of a''s three tasks under a limit of 3');
select pgflow.start_run('capped', '{"tenant": "b"}');
select is(pg_temp.admitted('capped'), 'a:1 b:1', 'another tenant gets a slot at once');

-- Weights: slots in proportion. A blocker fills the limit of 1 while the others queue.
select pg_temp.compile('weighted', '{"steps": {"work": {"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"], "weightPath": ["w"]}}}}');
select pgflow.start_run('weighted', '{"tenant": "x"}');
select count(*) from (select pgflow.start_run('weighted', jsonb_build_object('tenant', t, 'w', w))
                      from (values ('a', 2), ('b', 1)) v(t, w), generate_series(1, 6)) s;
select is(pg_temp.turns_taken('weighted', 7), 'x:1 a:1 b:1 a:1 b:1 a:1 a:1',
          'of the six slots after the blocker, weight 2 gets four and weight 1 two');
select pgflow.start_run('weighted', '{"w": "heavy"}');
select pgflow.start_run('weighted', '{"tenant": {"id": 7}, "w": -3}');
select results_eq($$select t.concurrency_key, t.key_weight from pgflow.step_tasks t join pgflow.runs r using (run_id)
                    where t.flow_slug = 'weighted' and (not r.input ? 'tenant' or jsonb_typeof(r.input->'tenant') = 'object')
                    order by 1$$,
                  $$values (''::text, 1::real), ('{"id": 7}', 1)$$,
                  'no value at the path is the key ''''; an object is its JSON text; a weight that is no positive number counts 1');

-- Priority orders a key's own tasks; between keys the shares decide.
select pg_temp.compile('urgent', '{"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"]}}');
select pgflow.start_run('urgent', '{"tenant": "x"}');
select pgflow.start_run('urgent', '{"tenant": "a", "n": 1}') as a_old \gset
select pgflow.start_run('urgent', '{"tenant": "a", "n": 2}') as a_new \gset
select pgflow.set_run_priority(:'a_new', 5);
select pg_temp.complete_one('urgent');
select is((select run_id from pgflow.step_tasks where flow_slug = 'urgent' and gate = 'admitted' and status = 'queued'),
          :'a_new'::uuid, 'a tenant''s high-priority run goes before its older ones');

-- The flow's key counts across the flow's steps.
select pg_temp.compile('both', '{"concurrencyLimit": 4, "concurrencyKey": {"path": ["tenant"], "limit": 1}}',
                       array['p', 'q']);
select pgflow.start_run('both', '{"tenant": "t1"}');
select is(pg_temp.admitted('both'), 't1:1', 'a run with two root steps gets one slot under a flow key limit of 1');
select pgflow.start_run('both', '{"tenant": "t2"}');
select is(pg_temp.admitted('both'), 't1:1 t2:1', 'as does another tenant''s');
select pg_temp.complete_one('both', 't1');
select is(pg_temp.admitted('both'), 't1:1 t2:1', 'a finished task lets its tenant''s other step in');
select is((select count(*) from pgflow.step_tasks where flow_slug = 'both' and gate = 'held' and status = 'queued'),
          1::bigint, 'while t2''s second task still waits');

-- A step's own key replaces the flow's and counts within the step.
select pg_temp.compile('own', '{"concurrencyLimit": 4, "concurrencyKey": {"path": ["tenant"], "limit": 1},
                                "steps": {"q": {"concurrencyKey": {"path": ["region"]}}}}', array['p', 'q']);
select count(*) from (select pgflow.start_run('own', '{"tenant": "t1", "region": "eu"}') from generate_series(1, 3)) s;
select results_eq($$select step_slug, concurrency_key, count(*) from pgflow.step_tasks
                    where flow_slug = 'own' and gate = 'admitted' group by 1, 2 order by 1$$,
                  $$values ('p'::text, 't1'::text, 1::bigint), ('q', 'eu', 3)$$,
                  'step q shares by region without a key limit; step p by tenant, one at a time');

-- Flows with limits and no key: tasks carry no key.
select pg_temp.compile('plain', '{"concurrencyLimit": 1}');
select pgflow.start_run('plain', '{"tenant": "a"}');
select is((select concurrency_key from pgflow.step_tasks where flow_slug = 'plain'), null, 'a task without a key has none');

select * from finish();
rollback;
