-- A malformed wait is refused with an error that names the step and the problem, and nothing
-- is added.
begin;
select plan(14);

select pgflow.create_flow('waits');

create function pg_temp.refuses(p_wait jsonb, p_problem text, p_type text default 'single') returns text
language sql as $$
  select throws_ok(format('select pgflow.add_wait_step(%L, %L, %L::jsonb, ''{}'', %L)', 'waits', 'w', p_wait, p_type),
                   '23514', format('Invalid wait of step "w" in flow "waits": its wait %s', p_problem),
                   format('refused: %s', p_wait))
$$;

select pg_temp.refuses('[]', 'must be a JSON object');
select pg_temp.refuses('{}', 'needs "kind": "signal" or "sleep"');
select pg_temp.refuses('{"kind": "approval"}', 'needs "kind": "signal" or "sleep"');
select pg_temp.refuses('{"kind": "signal", "timout": 5}', 'has an unknown key "timout" (a signal wait takes kind, timeout, timeoutOutput)');
select pg_temp.refuses('{"kind": "signal", "timeout": 0}', '"timeout" must be a whole number of seconds, at least 1');
select pg_temp.refuses('{"kind": "signal", "timeout": 1.5}', '"timeout" must be a whole number of seconds, at least 1');
select pg_temp.refuses('{"kind": "signal", "timeout": "60"}', '"timeout" must be a whole number of seconds, at least 1');
select pg_temp.refuses('{"kind": "signal", "timeoutOutput": 1}', '"timeoutOutput" needs a "timeout"');
select pg_temp.refuses('{"kind": "sleep"}', 'a sleep needs exactly one of "seconds" and "until"');
select pg_temp.refuses('{"kind": "sleep", "seconds": -1}', '"seconds" must be a whole number of seconds, at least 0');
select pg_temp.refuses('{"kind": "sleep", "until": "run.ship_at"}', '"until" must be a non-empty array of keys (a path into the step''s input, e.g. ["run", "ship_at"])');
select pg_temp.refuses('{"kind": "sleep", "until": ["run"]}', 'a map step sleeps for "seconds": "until" reads a single step''s input', 'map');
select throws_ok($$select pgflow.add_wait_step('waits', 'w', null)$$, '22004',
                 'Wait step "w" of flow "waits" needs a wait: {"kind": "signal"} or {"kind": "sleep", ...}',
                 'a wait step needs a wait');
select is((select count(*)::int from pgflow.steps where flow_slug = 'waits'), 0, 'and no step was added');

select * from finish();
rollback;
