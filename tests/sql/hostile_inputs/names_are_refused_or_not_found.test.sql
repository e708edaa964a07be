-- Hostile flow aliases, flow slugs and slugs of new flows (tests/data/hostile_inputs.tsv,
-- targets alias, slug and definition) reaching the SQL entry points: SQL metacharacters, format
-- directives and control characters are data — a lookup that finds nothing (P0002) or a slug
-- rule refusal (23514) naming the value —; bytes that are not UTF-8 or a NUL never reach a
-- function (22021); nothing is written.
begin;
\i _cases.sql

select plan(3 + (select count(*)::int from hostile where target = 'alias') * 5
              + (select count(*)::int from hostile where target = 'slug') * 4
              + (select count(*)::int from hostile where target = 'definition') * 2);

select ok((select count(*) >= 5 from hostile where target = 'alias'), 'the alias cases were loaded');
create temp table before as select pg_temp.snapshot() as snapshot;

-- alias: the starts by alias, and activate_flow_version(alias, ...)
select throws_ok(format('select pgflow.%s(%s, %L)', f.fn, pg_temp.value_sql(h.encoding, h.value), '{}'),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: %s refuses it', h.name, f.fn))
from hostile h
cross join (values (1, 'start_flow'), (2, 'start_flow_by_alias'), (3, 'start_run'), (4, 'start_flow_with_states')) f(i, fn)
where h.target = 'alias'
order by h.n, f.i;
-- hHost is not a version of a well-formed alias of another name
select throws_ok(format('select pgflow.activate_flow_version(%s, %L, null)', pg_temp.value_sql(h.encoding, h.value), 'hHost'),
                 case when h.sqlstate = 'P0002' then '22023' else h.sqlstate end,
                 case when h.sqlstate = 'P0002'
                      then format('Flow "hHost" is a version of alias "hHost", not of "%s"', pg_temp.value_text(h.encoding, h.value))
                      else pg_temp.expected_message(h) end,
                 format('%s: activate_flow_version refuses it as an alias', h.name))
from hostile h where h.target = 'alias' order by h.n;

-- slug: the pinned starts, and activate_flow_version(..., flow_slug, ...)
select throws_ok(format('select pgflow.%s(%s, %L)', f.fn, pg_temp.value_sql(h.encoding, h.value), '{}'),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: %s refuses it', h.name, f.fn))
from hostile h
cross join (values (1, 'start_flow_by_slug'), (2, 'start_run_by_slug'), (3, 'start_flow_with_states_by_slug')) f(i, fn)
where h.target = 'slug'
order by h.n, f.i;
select throws_ok(format('select pgflow.activate_flow_version(%L, %s, null)', 'hHost', pg_temp.value_sql(h.encoding, h.value)),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: activate_flow_version refuses it as a flow', h.name))
from hostile h where h.target = 'slug' order by h.n;

-- definition: create_flow and the worker's compiler
select throws_ok(format('select pgflow.create_flow(%s)', pg_temp.value_sql(h.encoding, h.value)),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: create_flow refuses it', h.name))
from hostile h where h.target = 'definition' order by h.n;
select throws_ok(format('select pgflow.ensure_flow_compiled(%s, %L, pgflow.worker_protocol())',
                        pg_temp.value_sql(h.encoding, h.value), '{"steps": [{"slug": "emit", "stepType": "single", "dependencies": []}]}'),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: ensure_flow_compiled refuses it', h.name))
from hostile h where h.target = 'definition' order by h.n;

select is(pg_temp.snapshot(), (select snapshot from before), 'nothing was written');
select is((select count(*)::int from pgflow.flows), 1, 'hHost is still the only flow');

select * from finish();
rollback;
