-- Partitioned queues need pg_partman, which this server does not have.
begin;
select plan(6);

select is((select count(*) from pg_extension where extname = 'pg_partman'), 0::bigint,
          'pg_partman is not installed here');
select throws_ok($$select pgmq.create_partitioned('parted')$$, 'P0001',
                 'pg_partman is required for partitioned queues', 'create_partitioned with defaults');
select throws_ok($$select pgmq.create_partitioned('parted', '1 day', '7 days')$$, 'P0001',
                 'pg_partman is required for partitioned queues', 'create_partitioned by time');
select throws_ok($$select pgmq.convert_archive_partitioned('parted')$$, 'P0001',
                 'pg_partman is required for partitioned queues', 'convert_archive_partitioned');
select is_empty($$select 1 from pg_class where relnamespace = 'pgmq'::regnamespace and relname <> 'meta' and relkind in ('r', 'p')$$,
                'no table was created');
select is_empty($$select * from pgmq.meta$$, 'no meta row was written');

select * from finish();
rollback;
