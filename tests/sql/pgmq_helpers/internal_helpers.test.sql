-- Internal helpers that are public in PGMQ, in a SQL-only install.
begin;
select plan(6);

select is(pgmq._extension_exists('pgmq'), false, '_extension_exists: no pgmq extension here');
select is(pgmq._extension_exists('plpgsql'), true, '_extension_exists: plpgsql is installed');
select pgmq.create('jobs') \g /dev/null
select is(pgmq._belongs_to_pgmq('q_jobs'), false, '_belongs_to_pgmq: queue tables are not extension members');
select lives_ok($$select pgmq.detach_archive('jobs')$$, 'detach_archive has nothing to detach and succeeds');
select ok(pgmq.drop_queue('jobs'), 'a later drop_queue still works');
select throws_ok($$select pgmq._ensure_pg_partman_installed()$$, 'P0001',
                 'pg_partman is required for partitioned queues', '_ensure_pg_partman_installed');

select * from finish();
rollback;
