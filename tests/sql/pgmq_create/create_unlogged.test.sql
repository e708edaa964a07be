-- create_unlogged(N): only the queue table is unlogged; the archive stays logged.
begin;
select plan(7);

select lives_ok($$select pgmq.create_unlogged('fast')$$, 'create_unlogged');
select is((select relpersistence::text from pg_class where oid = 'pgmq.q_fast'::regclass), 'u',
          'q_fast is UNLOGGED');
select is((select relpersistence::text from pg_class where oid = 'pgmq.a_fast'::regclass), 'p',
          'a_fast is a regular logged table');
select results_eq($$select queue_name::text, is_partitioned, is_unlogged from pgmq.meta$$,
                  $$values ('fast', false, true)$$, 'meta row (fast, false, true)');
select set_eq(
  $$select indexname::text from pg_indexes where schemaname = 'pgmq' and tablename <> 'meta'$$,
  array['q_fast_pkey', 'q_fast_vt_idx', 'a_fast_pkey', 'archived_at_idx_fast'],
  'same indexes as a logged queue');

select pgmq.send('fast', '{"n": 1}') as msg_id \gset
select is((select message from pgmq.read('fast', 30, 1)), '{"n": 1}'::jsonb, 'send and read work');
select ok(pgmq.archive('fast', :msg_id::bigint), 'archive works');

select * from finish();
rollback;
