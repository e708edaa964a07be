-- Hostile JSON (tests/data/hostile_inputs.tsv, target json) as a run's input (the start
-- functions) and as a task's output (complete_task): what jsonb cannot hold is refused before
-- any function runs, naming the problem — \u0000 (22P05), NaN and the infinities and a lone
-- surrogate (22P02), bytes that are not UTF-8 (22021), nesting beyond max_stack_depth (54001,
-- 100 000 levels) —, and nothing is written; everything else, SQL metacharacters, 1000 levels
-- of nesting and a 100 MB string included, is stored as given. (Nesting deeper than the C++
-- client's limit of 1000 levels, and numbers beyond a double, are accepted here.)
begin;
\i _cases.sql

create temp view cases as
select h, h.n, h.name, h.encoding, h.value, h.sqlstate, h.value like 'json_string:%' as big
from hostile h where h.target = 'json';
select plan((select (count(*) filter (where sqlstate <> '') * 6
                     + count(*) filter (where sqlstate = '' and not big) * 4
                     + count(*) filter (where sqlstate = '' and big) * 3)::int + 2 from cases));

select ok((select count(*) >= 10 from cases), 'the json cases were loaded');

-- ---- refused inputs ----
create temp table before as select pg_temp.snapshot() as snapshot;
select throws_ok(format('select pgflow.%s(%L, (%s)::jsonb)', f.fn, 'hHost', pg_temp.value_sql(c.encoding, c.value)),
                 c.sqlstate, pg_temp.expected_message(c.h), format('%s: %s refuses it as the input', c.name, f.fn))
from cases c
cross join (values (1, 'start_flow'), (2, 'start_flow_by_slug'), (3, 'start_run'), (4, 'start_flow_with_states')) f(i, fn)
where c.sqlstate <> ''
order by c.n, f.i;
select is(pg_temp.snapshot(), (select snapshot from before), 'refused inputs wrote nothing');

-- ---- refused outputs: one started task per case ----
create temp table tasks as
select c.n, pgflow.start_run('hHost', '{}') as run_id from cases c;
select pgflow_tests.start_task(t.run_id, 'emit') from tasks t \g /dev/null
create temp table before_outputs as select pg_temp.snapshot() as snapshot;
select throws_ok(format('select pgflow.complete_task(%L, %L, 0, (%s)::jsonb)', t.run_id, 'emit', pg_temp.value_sql(c.encoding, c.value)),
                 c.sqlstate, pg_temp.expected_message(c.h), format('%s: complete_task refuses it as the output', c.name))
from cases c join tasks t using (n) where c.sqlstate <> '' order by c.n;
select is(pg_temp.snapshot(), (select snapshot from before_outputs), format('%s: nothing was written, the task is still started', c.name))
from cases c where c.sqlstate <> '' order by c.n;

-- ---- accepted inputs and outputs: stored as given (100 MB by length) ----
select ok(pg_temp.value_of(format('select (pgflow.%s(%L, (%s)::jsonb)).input = (%s)::jsonb', f.fn, 'hHost',
                                  pg_temp.value_sql(c.encoding, c.value), pg_temp.value_sql(c.encoding, c.value))) = 'true',
          format('%s: %s stores the input as given', c.name, f.fn))
from cases c
cross join (values (1, 'start_flow'), (2, 'start_flow_by_slug')) f(i, fn)
where c.sqlstate = '' and not c.big
order by c.n, f.i;

select is(pg_temp.value_of(format('select status from pgflow.complete_task(%L, %L, 0, (%s)::jsonb)', t.run_id, 'emit',
                                  pg_temp.value_sql(c.encoding, c.value))),
          'completed', format('%s: complete_task accepts it as the output', c.name))
from cases c join tasks t using (n) where c.sqlstate = '' order by c.n;
select ok(pg_temp.value_of(format('select s.output = (%s)::jsonb from pgflow.step_states s where s.run_id = %L',
                                  pg_temp.value_sql(c.encoding, c.value), t.run_id)) = 'true',
          format('%s: the output is stored as given', c.name))
from cases c join tasks t using (n) where c.sqlstate = '' and not c.big order by c.n;
select is((select octet_length(s.output->>'s')::text from pgflow.step_states s where s.run_id = t.run_id),
          split_part(c.value, ':', 2), format('%s: the output is stored as given', c.name))
from cases c join tasks t using (n) where c.sqlstate = '' and c.big order by c.n;

create temp table big_runs as
select c.n, pg_temp.value_of(format('select pgflow.start_run(%L, (%s)::jsonb)', 'hHost', pg_temp.value_sql(c.encoding, c.value))) as run_id
from cases c where c.sqlstate = '' and c.big;
select is((select octet_length(r.input->>'s')::text from pgflow.runs r where r.run_id = b.run_id::uuid),
          split_part(c.value, ':', 2), format('%s: start_run stores the input as given', c.name))
from cases c join big_runs b using (n) order by c.n;

select * from finish();
rollback;
