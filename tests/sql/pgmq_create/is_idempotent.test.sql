-- Repeating create with the same exact name changes nothing and keeps the messages.
begin;
select plan(6);

select lives_ok($$select pgmq.create('jobs')$$, 'first create');
select pgmq.send('jobs', '{"keep": true}') as msg_id \gset
select lives_ok($$select pgmq.create('jobs')$$, 'create again');
select lives_ok($$select pgmq.create_non_partitioned('jobs')$$, 'create_non_partitioned, same name');

select is((select count(*) from pgmq.meta), 1::bigint, 'still one meta row');
select results_eq($$select msg_id, message from pgmq.q_jobs$$,
                  format($$values (%s::bigint, '{"keep": true}'::jsonb)$$, :msg_id),
                  'the queued message survived');
select is((select count(*) from pg_indexes where schemaname = 'pgmq' and tablename <> 'meta'), 4::bigint,
          'no duplicate indexes');

select * from finish();
rollback;
