-- Unknown flows (aliases) fail with P0002 (upstream: a foreign-key error); SQL NULL input is a clear
-- 22004 error; JSON null and non-object JSON are fine for flows without a root map.
begin;
select plan(5);

select throws_ok($$select pgflow.start_flow('nope', '{}')$$, 'P0002', 'Flow alias "nope" does not exist',
                 'unknown flow: no alias of that name');
select pgflow_tests.setup_flow('sequential');
select throws_ok($$select pgflow.start_flow('sequential', null)$$, '22004',
                 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)',
                 'SQL NULL input');
select is((select input from pgflow.start_flow('sequential', 'null')), 'null'::jsonb, 'JSON null input is stored');
select is((select input from pgflow.start_flow('sequential', '[1, 2]')), '[1, 2]'::jsonb,
          'an array input is fine for a flow without root map');
select is((select count(*) from pgflow.runs), 2::bigint, 'only the valid calls created runs');

select * from finish();
rollback;
