-- A flow with a root map needs an array input; upstream's messages (P0001), nothing is created.
begin;
select plan(6);

select pgflow.create_flow('m');
select pgflow.add_step('m', 'items', step_type => 'map');

select throws_ok($$select pgflow.start_flow('m', null)$$, 'P0001',
                 'Flow m has root map steps but input is NULL', 'SQL NULL');
select throws_ok($$select pgflow.start_flow('m', 'null')$$, 'P0001',
                 'Flow m has root map steps but input is not an array (got null)', 'JSON null');
select throws_ok($$select pgflow.start_flow('m', '{"items": []}')$$, 'P0001',
                 'Flow m has root map steps but input is not an array (got object)', 'an object');
select throws_ok($$select pgflow.start_flow('m', '"text"')$$, 'P0001',
                 'Flow m has root map steps but input is not an array (got string)', 'a string');
select throws_ok($$select pgflow.start_flow('m', '3')$$, 'P0001',
                 'Flow m has root map steps but input is not an array (got number)', 'a number');
select is((select count(*) from pgflow.runs), 0::bigint, 'no run was created');

select * from finish();
rollback;
