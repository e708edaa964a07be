-- A key must be 1 to 255 characters; an unknown alias or flow is named (P0002) before the key
-- is looked at; a start that fails (SQL NULL input, a root map without an array) leaves
-- neither a run nor a key, so the key stays free for a correct start.
begin;
select plan(12);

select pgflow_tests.setup_flow('sequential');
select throws_ok($$select pgflow.start_run_idempotent('sequential', '{}', null)$$, '22023',
                 'Idempotency key must be 1 to 255 characters (got NULL)', 'a NULL key');
select throws_ok($$select pgflow.start_run_idempotent('sequential', '{}', '')$$, '22023',
                 'Idempotency key must be 1 to 255 characters (got 0 characters)', 'an empty key');
select throws_ok($$select pgflow.start_run_idempotent('sequential', '{}', repeat('k', 256))$$, '22023',
                 'Idempotency key must be 1 to 255 characters (got 256 characters)', 'a key of 256 characters');
select is((select created from pgflow.start_run_idempotent('sequential', '{}', repeat('é', 255))), true,
          '255 characters (not bytes) are fine');
select throws_ok($$select pgflow.start_run_idempotent('nope', '{}', '')$$, 'P0002',
                 'Flow alias "nope" does not exist', 'an unknown alias is named (before the key is checked)');
select throws_ok($$select pgflow.start_run_idempotent_by_slug('nope', '{}', '')$$, 'P0002',
                 'Flow "nope" does not exist', 'an unknown flow is named (before the key is checked)');
select throws_ok($$select pgflow.start_run_idempotent('sequential', null, 'k')$$, '22004',
                 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)',
                 'SQL NULL input is refused as start_flow refuses it');
select is((select count(*) from pgflow.run_idempotency_keys where idempotency_key = 'k'), 0::bigint,
          'the failed start left no key');
select is((select created from pgflow.start_run_idempotent('sequential', '{}', 'k')), true,
          'so the key is free for a start that succeeds');

select pgflow_tests.compile_step_flow('each_item', jsonb_build_array(
  pgflow_tests.step_shape('items', step_type => 'map')));
select throws_like($$select pgflow.start_run_idempotent('each_item', '{"not": "an array"}', 'batch-1')$$,
                   'Flow each_item has root map steps but input is not an array (got object)',
                   'a root map refuses an object');
select is((select created from pgflow.start_run_idempotent('each_item', '[1, 2]', 'batch-1')), true,
          'and that failure left the key free too');

-- A caller that made every constraint immediate: the key's foreign key is still checked at
-- commit (the run does not exist yet when the key row is written).
set constraints all immediate;
select is((select created from pgflow.start_run_idempotent('sequential', '{}', 'immediate')), true,
          'a start in a transaction with SET CONSTRAINTS ALL IMMEDIATE');

select * from finish();
rollback;
