-- A read message stays invisible until its vt; vt = 0 (or set_vt) makes it visible again; every
-- read increments read_ct; rolling back a read undoes it.
begin;
select plan(11);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send('jobs', '{"n": 1}') as id \gset

select results_eq($$select msg_id, read_ct from pgmq.read('jobs', 30, 1)$$,
                  format('values (%s::bigint, 1)', :id), 'first read: read_ct 1');
select is_empty($$select * from pgmq.read('jobs', 30, 1)$$, 'invisible while its vt is in the future');
select is_empty($$select * from pgmq.pop('jobs')$$, 'pop does not take it either');

select results_eq($$select msg_id, read_ct from pgmq.set_vt('jobs', $$ || :id || $$, 0)$$,
                  format('values (%s::bigint, 1)', :id), 'set_vt 0 releases it (read_ct unchanged)');
select results_eq($$select read_ct from pgmq.read('jobs', 0, 1)$$, $$values (2)$$,
                  'visible again; read with vt 0 ...');
select results_eq($$select read_ct from pgmq.read('jobs', -5, 1)$$, $$values (3)$$,
                  '... leaves it visible (negative vt too)');

savepoint before_read;
select results_eq($$select read_ct from pgmq.read('jobs', 30, 1)$$, $$values (4)$$, 'a read that will be rolled back');
rollback to savepoint before_read;
select results_eq($$select read_ct from pgmq.read('jobs', 1, 1)$$, $$values (4)$$,
                  'rolling back a read restores vt and read_ct');

select is_empty($$select * from pgmq.read('jobs', 30, 1)$$, 'hidden for the 1-second vt');
select pg_sleep(1.1) \g /dev/null
select results_eq($$select read_ct from pgmq.read('jobs', 30, 1)$$, $$values (5)$$,
                  'visible again once vt has passed');

select * from finish();
rollback;
