-- Hostile worker function names (tests/data/hostile_inputs.tsv, target function_name) reaching
-- register_worker: SQL metacharacters and non-ASCII text are stored as given; bytes that are
-- not UTF-8 or a NUL never reach it (22021); nothing is written.
begin;
\i _cases.sql

select plan(2 + (select (2 * count(*) filter (where sqlstate = '') + count(*) filter (where sqlstate <> ''))::int
                 from hostile where target = 'function_name'));

select is(pg_temp.attempt(format('select (pgflow.register_worker(gen_random_uuid(), %s, %L, %L, pgflow.worker_protocol())).function_name',
                                 pg_temp.value_sql(h.encoding, h.value), 'hHost', 'hhost')),
          'ok: ' || pg_temp.value_text(h.encoding, h.value), format('%s: register_worker stores it as given', h.name))
from hostile h where h.target = 'function_name' and h.sqlstate = '' order by h.n;
select is((select count(*)::int from pgflow.worker_functions w where w.function_name = pg_temp.value_text(h.encoding, h.value)),
          0, format('%s: (the registration was rolled back)', h.name))
from hostile h where h.target = 'function_name' and h.sqlstate = '' order by h.n;

create temp table before as select pg_temp.snapshot() as snapshot;
select throws_ok(format('select pgflow.register_worker(gen_random_uuid(), %s, %L, %L, pgflow.worker_protocol())',
                        pg_temp.value_sql(h.encoding, h.value), 'hHost', 'hhost'),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: register_worker refuses it', h.name))
from hostile h where h.target = 'function_name' and h.sqlstate <> '' order by h.n;
select is(pg_temp.snapshot(), (select snapshot from before), 'nothing was written');
select is((select count(*)::int from pgflow.worker_functions), 0, 'no worker function exists');

select * from finish();
rollback;
