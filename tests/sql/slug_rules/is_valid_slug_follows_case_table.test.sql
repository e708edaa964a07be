-- pgflow.is_valid_slug agrees with every row of the shared case table
-- tests/data/slug_cases.tsv (the C++ DSL test reads the same file), and the table exercises
-- both outcomes and every rule.
begin;
create temp table slug_cases (n int generated always as identity, slug text, valid boolean, reason text);
\copy slug_cases (slug, valid, reason) from '../../data/slug_cases.tsv' with (format text, header true)

select plan((select count(*)::int + 3 from slug_cases));

select ok((select count(*) >= 20 from slug_cases), 'the case table was loaded');
select is((select array_agg(distinct valid order by valid) from slug_cases), array[false, true],
          'it has valid and invalid cases');
select is(array(select r from unnest(array['empty', 'too_long', 'invalid_character', 'leading_digit',
                                            'leading_underscore', 'trailing_underscore',
                                            'double_underscore', 'reserved']) r
                where not exists (select 1 from slug_cases c where not c.valid and split_part(c.reason, ':', 1) = r)),
          '{}'::text[], 'every rule has at least one invalid case');

select is(pgflow.is_valid_slug(slug), valid,
          format('is_valid_slug(%s) = %s (%s)', quote_literal(slug), valid, reason))
from slug_cases order by n;

select * from finish();
rollback;
