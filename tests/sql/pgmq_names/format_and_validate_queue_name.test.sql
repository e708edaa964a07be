-- The two name helpers: format_table_name maps (and checks characters), validate_queue_name
-- checks the length only.
begin;
select plan(13);

select is(pgmq.format_table_name('jobs', 'q'), 'q_jobs', 'q_ prefix');
select is(pgmq.format_table_name('jobs', 'a'), 'a_jobs', 'a_ prefix');
select is(pgmq.format_table_name('MyQueue', 'q'), 'q_myqueue', 'the result is lower-cased');
select is(pgmq.format_table_name('x', 'Q'), 'q_x', 'including the prefix');
select is(pgmq.format_table_name('', 'q'), 'q_', 'the empty name maps to q_');
select is(pgmq.format_table_name('with space', 'q'), 'q_with space', 'no quoting here: callers use %I');
select throws_ok($$select pgmq.format_table_name('a$b', 'q')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', '$');
select throws_ok($$select pgmq.format_table_name('a--b', 'q')$$, 'P0001',
                 'queue name contains invalid characters: $, ;, --, or \''', '--');
select lives_ok($$select pgmq.format_table_name('a-b', 'q')$$, 'a single hyphen is fine');

select lives_ok(format($$select pgmq.validate_queue_name(%L)$$, repeat('a', 47)), '47 characters pass');
select throws_ok(format($$select pgmq.validate_queue_name(%L)$$, repeat('a', 48)), 'P0001',
                 'queue name is too long, maximum length is 48 characters', '48 characters fail');
select lives_ok(format($$select pgmq.validate_queue_name(%L)$$, repeat('é', 47)),
                'the limit counts characters, not bytes (47 two-byte letters pass)');
select lives_ok($$select pgmq.validate_queue_name('a$b')$$,
                'validate_queue_name does not look at characters (format_table_name does)');

select * from finish();
rollback;
