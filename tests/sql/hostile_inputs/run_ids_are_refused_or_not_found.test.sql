-- Hostile run ids (tests/data/hostile_inputs.tsv, target run_id) reaching the run entry points:
-- a value that is not a UUID is refused by the uuid type itself (22P02, naming it) before any
-- function runs, as are bytes that are not UTF-8 or a NUL (22021); nothing is written. Other
-- spellings PostgreSQL reads as a UUID (braces, upper case, a hyphen after any four digits) name
-- the run in its canonical form: an unknown run (P0002), or the id a new run gets.
begin;
\i _cases.sql

select plan(1 + (select count(*)::int from hostile where target = 'run_id') * 6);

-- A failed run to retry with a hostile new run id.
select pgflow.start_run('hHost', '{}') as cancelled \gset
select pgflow.cancel_run(:'cancelled') \g /dev/null
create temp table before as select pg_temp.snapshot() as snapshot;

-- The run entry points, given the case as the run's id.
select throws_ok(format('select pgflow.%s((%s)::uuid)', f.fn, pg_temp.value_sql(h.encoding, h.value)),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: %s refuses it', h.name, f.fn))
from hostile h
cross join (values (1, 'cancel_run'), (2, 'retry_run'), (3, 'resume_run')) f(i, fn)
where h.target = 'run_id'
order by h.n, f.i;
-- get_run_with_states: NULL for an unknown run
select is(pg_temp.attempt(format('select pgflow.get_run_with_states((%s)::uuid)', pg_temp.value_sql(h.encoding, h.value))),
          case when h.sqlstate = 'P0002' then 'ok: <null>' else h.sqlstate || ': ' || pg_temp.expected_message(h) end,
          format('%s: get_run_with_states refuses it or finds no run', h.name))
from hostile h where h.target = 'run_id' order by h.n;

-- The case as the id of a new run (each attempt rolled back).
select is(pg_temp.attempt(format('select pgflow.start_run(%L, %L, (%s)::uuid)', 'hHost', '{}', pg_temp.value_sql(h.encoding, h.value))),
          case when h.sqlstate = 'P0002' then 'ok: ' || substring(h.sql_message from '"(.*)"')
               else h.sqlstate || ': ' || pg_temp.expected_message(h) end,
          format('%s: start_run refuses it as a new run id or uses its canonical form', h.name))
from hostile h where h.target = 'run_id' order by h.n;
select is(pg_temp.attempt(format('select pgflow.retry_run(%L, (%s)::uuid)', :'cancelled', pg_temp.value_sql(h.encoding, h.value))),
          case when h.sqlstate = 'P0002' then 'ok: ' || substring(h.sql_message from '"(.*)"')
               else h.sqlstate || ': ' || pg_temp.expected_message(h) end,
          format('%s: retry_run refuses it as a new run id or uses its canonical form', h.name))
from hostile h where h.target = 'run_id' order by h.n;

select is(pg_temp.snapshot(), (select snapshot from before), 'nothing was written');

select * from finish();
rollback;
