-- pgflow._step_queue_name agrees with every row of the shared table
-- tests/data/step_queue_names.tsv (the C++ routes_of test reads the same file): the readable
-- name flow__step when it fits 47 characters, else flow__index, else none; and the table covers
-- all three outcomes and both boundaries.
begin;
create temp table names_cases (n int generated always as identity, flow_slug text, step_slug text,
                               step_index int, queue_name text, reason text);
\copy names_cases (flow_slug, step_slug, step_index, queue_name, reason) from '../../data/step_queue_names.tsv' with (format text, header true)

select plan((select count(*)::int + 4 from names_cases));

select ok((select count(*) >= 8 from names_cases), 'the case table was loaded');
select ok(exists (select 1 from names_cases where queue_name = '')
          and exists (select 1 from names_cases where queue_name ~ '__[0-9]+$')
          and exists (select 1 from names_cases where queue_name ~ '__[a-z]'),
          'it has readable, index and rejected cases');
select ok(exists (select 1 from names_cases where length(queue_name) = 47 and queue_name ~ '__[a-z]')
          and exists (select 1 from names_cases where length(queue_name) = 47 and queue_name ~ '__[0-9]+$'),
          'it has both names at exactly 47 characters');
select is((select count(*) from names_cases where length(queue_name) > 47), 0::bigint,
          'no expected name is longer than 47 characters');

select is(pgflow._step_queue_name(flow_slug, step_slug, step_index), nullif(queue_name, ''),
          format('%s / %s / %s -> %s (%s)', flow_slug, step_slug, step_index,
                 coalesce(nullif(queue_name, ''), 'rejected'), reason))
from names_cases order by n;

select * from finish();
rollback;
