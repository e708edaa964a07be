-- create_non_partitioned(N) is what create(N) does.
begin;
select plan(5);

select lives_ok($$select pgmq.create_non_partitioned('plain')$$, 'create_non_partitioned');
select has_table('pgmq', 'q_plain', 'queue table');
select has_table('pgmq', 'a_plain', 'archive table');
select has_index('pgmq', 'a_plain', 'archived_at_idx_plain', 'archive index');
select results_eq($$select queue_name::text, is_partitioned, is_unlogged from pgmq.meta$$,
                  $$values ('plain', false, false)$$, 'meta row (plain, false, false)');

select * from finish();
rollback;
