-- drop_queue(q): drops both tables (with their sequence and indexes) and the meta row; true.
-- In a SQL-only install a missing queue is not an error: it also returns true.
begin;
select plan(11);

select lives_ok($$select pgmq.create('jobs')$$, 'create jobs');
select lives_ok($$select pgmq.create_unlogged('other')$$, 'create another queue');
select pgmq.send('jobs', '{}') \g /dev/null
select pgmq.archive('jobs', 1::bigint) \g /dev/null

select is(pgmq.drop_queue('jobs'), true, 'drop_queue returns true');
select ok(to_regclass('pgmq.q_jobs') is null and to_regclass('pgmq.a_jobs') is null,
          'queue and archive tables are gone');
select ok(to_regclass('pgmq.q_jobs_msg_id_seq') is null, 'the sequence is gone');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('other')$$,
                  'only the dropped queue''s meta row was removed');
select has_table('pgmq', 'q_other', 'other queues are untouched');

select is(pgmq.drop_queue('never_created'), true, 'a queue that does not exist: true, not an error');

set local client_min_messages = error;  -- it warns about the deprecation
select is(pgmq.drop_queue('other', false), true, 'the deprecated two-argument form still works');
reset client_min_messages;
select hasnt_table('pgmq', 'q_other', 'and dropped the queue');

select lives_ok($$select pgmq.create('jobs')$$, 'the name can be used again');

select * from finish();
rollback;
