-- Run ids are UUIDs of version 7 (since 0015): the first 48 bits are the Unix time in
-- milliseconds when the id was made, then the version nibble 7, the RFC 9562 variant and random
-- bits. Starts without a caller's id get one; a caller's own id is kept as given.
begin;
select plan(8);

select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as t0 \gset
select pgflow._new_run_id() as id \gset
select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as t1 \gset

select is(substr(:'id', 15, 1), '7', 'the version nibble is 7');
select ok(substr(:'id', 20, 1) in ('8', '9', 'a', 'b'), 'the variant is RFC 9562''s (10xx)');
select ok(('x' || lpad(replace(substr(:'id', 1, 13), '-', ''), 16, '0'))::bit(64)::bigint between :t0 and :t1,
          'the first 48 bits are the Unix time in milliseconds when it was made');
select is((select count(distinct pgflow._new_run_id())::int from generate_series(1, 5000)), 5000,
          '5000 ids made at once are distinct (random bits below the millisecond)');

select pgflow._new_run_id() as early \gset
select pg_sleep(0.005);
select ok(pgflow._new_run_id() > :'early'::uuid, 'an id made in a later millisecond sorts after');

select pgflow.create_flow('f');
select pgflow.add_step('f', 'only');
select is((select substr(run_id::text, 15, 1) from pgflow.start_flow('f', '{}')), '7',
          'start_flow gives a run started without an id a version 7 id');
select is((select run_id from pgflow.start_flow('f', '{}', '11111111-2222-4333-8444-555555555555')),
          '11111111-2222-4333-8444-555555555555'::uuid, 'a caller''s own run id is kept as given');
select is((select pg_get_expr(d.adbin, d.adrelid) from pg_attrdef d
           join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
           where d.adrelid = 'pgflow.runs'::regclass and a.attname = 'run_id'),
          'pgflow._new_run_id()', 'runs.run_id defaults to a new time-ordered id');

select * from finish();
rollback;
