-- An offset of 0 makes a hidden message visible again (used to requeue).
begin;
select plan(2);

select pgmq.create('q');
select pgmq.send('q', '{}', 300);
select is_empty($$select * from pgmq.read('q', 10, 1)$$, 'hidden at first');
select pgflow.set_vt_batch('q', array[1]::bigint[], array[0]);
select results_eq($$select msg_id from pgmq.read('q', 10, 1)$$, $$values (1::bigint)$$, 'visible after offset 0');

select * from finish();
rollback;
