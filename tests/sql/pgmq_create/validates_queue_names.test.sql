-- Name rules applied by the create functions: at most 47 characters; no $ ; -- or '; anything
-- else (empty, spaces, hyphens, dots, Unicode) is accepted and simply quoted.
begin;
select plan(20);

select lives_ok(format($$select pgmq.create(%L)$$, repeat('a', 47)), '47 characters are accepted');
select has_table('pgmq', 'q_' || repeat('a', 47), 'q_<47 chars>');
select has_index('pgmq', 'a_' || repeat('a', 47), 'archived_at_idx_' || repeat('a', 47),
                 'archived_at_idx_<47 chars> fits in 63 bytes');
select has_sequence('pgmq', 'q_' || repeat('a', 47) || '_msg_id_seq', 'q_<47 chars>_msg_id_seq');

select throws_ok(format($$select pgmq.create(%L)$$, repeat('b', 48)), 'P0001',
                 'queue name is too long, maximum length is 48 characters',
                 'create rejects 48 characters (the message is 1.5.1''s, off by one)');
select throws_ok(format($$select pgmq.create_unlogged(%L)$$, repeat('b', 48)), 'P0001',
                 'queue name is too long, maximum length is 48 characters',
                 'create_unlogged rejects 48 characters');
select throws_ok(format($$select pgmq.create_partitioned(%L)$$, repeat('b', 48)), 'P0001',
                 'queue name is too long, maximum length is 48 characters',
                 'create_partitioned checks the length before anything else');
select hasnt_table('pgmq', 'q_' || repeat('b', 48), 'nothing was created for the long name');

select throws_ok($$select pgmq.create('bad$name')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', '$ is rejected');
select throws_ok($$select pgmq.create('bad;name')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', '; is rejected');
select throws_ok($$select pgmq.create('bad--name')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', '-- is rejected');
select throws_ok($$select pgmq.create('bad''name')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', 'a single quote is rejected');
select throws_ok($$select pgmq.create_unlogged('x;drop table pgmq.meta')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''',
                 'create_unlogged checks characters too');
select is((select count(*) from pgmq.meta where queue_name <> repeat('a', 47)), 0::bigint,
          'rejected names left no meta row');

select lives_ok($$select pgmq.create('')$$, 'the empty name is accepted');
select ok(to_regclass('pgmq.q_') is not null and to_regclass('pgmq.a_') is not null,
          'it creates q_ and a_');
select lives_ok($$select pgmq.create('with space')$$, 'a space is accepted');
select lives_ok($$select pgmq.create('Dotted.Dash-ed')$$, 'dots, single hyphens and upper case are accepted');
select lives_ok($$select pgmq.create('tâche')$$, 'Unicode is accepted');
select set_eq(
  $$select relname::text from pg_class
    where relnamespace = 'pgmq'::regnamespace and relkind = 'r' and relname like 'q\_%' and relname not like 'q\_aaa%'$$,
  array['q_', 'q_with space', 'q_dotted.dash-ed', 'q_tâche'],
  'they map to quoted, lower-cased identifiers');

select * from finish();
rollback;
