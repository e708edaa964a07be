-- Every invalid slug of the shared case table (tests/data/slug_cases.tsv) is rejected by
-- create_flow (as a flow slug) and by add_step (as a step slug) with a check violation whose
-- message contains the slug and names the broken rule; every valid slug is accepted by
-- add_step, and by create_flow when it fits a queue name (at most 47 characters).
begin;
create temp table slug_cases (n int generated always as identity, slug text, valid boolean, reason text);
\copy slug_cases (slug, valid, reason) from '../../data/slug_cases.tsv' with (format text, header true)

-- The rule names of the table and the words the SQL messages use for them.
create temp table rule_words (rule text, words text);
insert into rule_words values
  ('empty', 'is empty'), ('too_long', 'longer than 128 characters'),
  ('invalid_character', 'may contain only ASCII letters, digits and underscores'),
  ('leading_digit', 'starts with a digit'), ('leading_underscore', 'starts with an underscore'),
  ('trailing_underscore', 'ends with an underscore'), ('double_underscore', 'double underscore'),
  ('reserved', 'reserved word');

-- Runs a statement in a subtransaction that is always rolled back (so cases cannot interfere);
-- returns 'SQLSTATE: message' of its error, or NULL when it succeeded.
create function pg_temp.error_of(stmt text) returns text language plpgsql as $$
begin
  execute stmt;
  raise exception 'succeeded' using errcode = 'P0099';
exception
  when sqlstate 'P0099' then return null;
  when others then return sqlstate || ': ' || sqlerrm;
end $$;

select plan((select 3 * count(*)::int from slug_cases where not valid) + 2);

select pgflow.create_flow('host');

create temp table outcomes as
select c.n, c.slug, c.reason, w.words,
       pg_temp.error_of(format('select pgflow.create_flow(%L)', c.slug)) as flow_error,
       pg_temp.error_of(format('select pgflow.add_step(''host'', %L)', c.slug)) as step_error
from slug_cases c
left join rule_words w on w.rule = split_part(c.reason, ':', 1)
where not c.valid;

select ok(flow_error like '23514: %' and strpos(flow_error, format('"%s"', slug)) > 0,
          format('create_flow(%s) is rejected naming the slug (%s): %s', quote_literal(slug), reason, flow_error))
from outcomes order by n;
select ok(strpos(flow_error, words) > 0,
          format('create_flow(%s) names the broken rule "%s"', quote_literal(slug), words))
from outcomes order by n;
select ok(step_error like '23514: %' and strpos(step_error, format('"%s"', slug)) > 0,
          format('add_step(''host'', %s) is rejected naming the slug (%s): %s', quote_literal(slug), reason, step_error))
from outcomes order by n;

select is(array(select c.slug from slug_cases c
                where c.valid and pg_temp.error_of(format('select pgflow.add_step(''host'', %L)', c.slug)) is not null
                order by c.n),
          '{}'::text[], 'add_step accepts every valid slug');
select is(array(select c.slug from slug_cases c
                where c.valid and length(c.slug) <= 47
                  and pg_temp.error_of(format('select pgflow.create_flow(%L)', c.slug)) is not null
                order by c.n),
          '{}'::text[], 'create_flow accepts every valid slug of at most 47 characters');

select * from finish();
rollback;
