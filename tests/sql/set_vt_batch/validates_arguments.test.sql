-- NULL or empty arrays do nothing; arrays of different lengths are an error; unknown ids are
-- skipped; an unknown queue raises 42P01.
begin;
select plan(6);

select pgmq.create('q');
select pgmq.send('q', '{}');
select is_empty($$select * from pgflow.set_vt_batch('q', null, array[1])$$, 'NULL msg_ids: empty result');
select is_empty($$select * from pgflow.set_vt_batch('q', array[1]::bigint[], null)$$, 'NULL offsets: empty result');
select is_empty($$select * from pgflow.set_vt_batch('q', '{}', '{}')$$, 'empty arrays: empty result');
select throws_ok($$select * from pgflow.set_vt_batch('q', array[1, 2]::bigint[], array[5])$$, 'P0001',
                 'msg_ids length (2) must equal vt_offsets length (1)', 'different lengths');
select results_eq($$select msg_id from pgflow.set_vt_batch('q', array[1, 99]::bigint[], array[5, 5])$$,
                  $$values (1::bigint)$$, 'an unknown id is skipped; only existing messages are returned');
select throws_ok($$select * from pgflow.set_vt_batch('missing', array[1]::bigint[], array[5])$$, '42P01',
                 'relation "pgmq.q_missing" does not exist', 'unknown queue');

select * from finish();
rollback;
