-- Hostile cancel reasons (tests/data/hostile_inputs.tsv, target reason): SQL metacharacters,
-- control characters, non-ASCII text and a megabyte are stored exactly as given; bytes that are
-- not UTF-8 or a NUL never reach cancel_run (22021) and the run stays started.
begin;
\i _cases.sql

select plan((select count(*)::int from hostile where target = 'reason') * 2);

create temp table runs_of as
select h.n, pgflow.start_run('hHost', '{}') as run_id from hostile h where h.target = 'reason';

-- accepted: cancelled, with the reason as given
select is(pg_temp.value_of(format('select pgflow.cancel_run(%L, %s)', r.run_id, pg_temp.value_sql(h.encoding, h.value))),
          'true', format('%s: cancel_run accepts it', h.name))
from hostile h join runs_of r using (n) where h.target = 'reason' and h.sqlstate = '' order by h.n;
select ok((select x.cancel_reason = pg_temp.value_text(h.encoding, h.value) from pgflow.runs x where x.run_id = r.run_id),
          format('%s: the reason is stored as given', h.name))
from hostile h join runs_of r using (n) where h.target = 'reason' and h.sqlstate = '' order by h.n;

-- refused: nothing changes
create temp table before as select pg_temp.snapshot() as snapshot;
select throws_ok(format('select pgflow.cancel_run(%L, %s)', r.run_id, pg_temp.value_sql(h.encoding, h.value)),
                 h.sqlstate, pg_temp.expected_message(h), format('%s: cancel_run refuses it', h.name))
from hostile h join runs_of r using (n) where h.target = 'reason' and h.sqlstate <> '' order by h.n;
select is(pg_temp.snapshot(), (select snapshot from before), format('%s: nothing was written', h.name))
from hostile h where h.target = 'reason' and h.sqlstate <> '' order by h.n;

select * from finish();
rollback;
