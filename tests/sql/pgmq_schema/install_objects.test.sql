-- Global objects of the bundled install: schema, meta table, composite types, privileges.
begin;
select plan(16);

select has_schema('pgmq');
select is(obj_description('pgmq'::regnamespace, 'pg_namespace'),
          'pgflow bundled PGMQ 1.5.1 API (pure SQL)',
          'the schema comment marks the bundled install (the migration runner looks for it)');
select is((select count(*) from pg_extension where extname = 'pgmq'), 0::bigint,
          'no pgmq extension is involved');

select results_eq(
  $$select attname::text collate "default", format_type(atttypid, atttypmod), attnotnull
    from pg_attribute where attrelid = 'pgmq.meta'::regclass and attnum > 0 and not attisdropped
    order by attnum$$,
  $$values ('queue_name', 'character varying', true),
           ('is_partitioned', 'boolean', true),
           ('is_unlogged', 'boolean', true),
           ('created_at', 'timestamp with time zone', true)$$,
  'pgmq.meta has exactly the documented columns, in order');
select col_default_is('pgmq', 'meta', 'created_at', 'now()', 'meta.created_at defaults to now()');
select hasnt_pk('pgmq', 'meta', 'meta has no primary key');
select results_eq(
  $$select conname::text collate "default", contype::text, pg_get_constraintdef(oid)
    from pg_constraint where conrelid = 'pgmq.meta'::regclass and contype in ('p', 'u')$$,
  $$values ('meta_queue_name_key', 'u', 'UNIQUE (queue_name)')$$,
  'queue_name is unique through meta_queue_name_key');

select results_eq(
  $$select attname::text collate "default", format_type(atttypid, atttypmod)
    from pg_attribute where attrelid = 'pgmq.message_record'::regclass and attnum > 0
    order by attnum$$,
  $$values ('msg_id', 'bigint'), ('read_ct', 'integer'),
           ('enqueued_at', 'timestamp with time zone'), ('vt', 'timestamp with time zone'),
           ('message', 'jsonb'), ('headers', 'jsonb')$$,
  'pgmq.message_record: read_ct is integer and headers is the last attribute');
select results_eq(
  $$select attname::text collate "default", format_type(atttypid, atttypmod)
    from pg_attribute where attrelid = 'pgmq.queue_record'::regclass and attnum > 0
    order by attnum$$,
  $$values ('queue_name', 'character varying'), ('is_partitioned', 'boolean'),
           ('is_unlogged', 'boolean'), ('created_at', 'timestamp with time zone')$$,
  'pgmq.queue_record has the shape and order of meta');
select results_eq(
  $$select attname::text collate "default", format_type(atttypid, atttypmod)
    from pg_attribute where attrelid = 'pgmq.metrics_result'::regclass and attnum > 0
    order by attnum$$,
  $$values ('queue_name', 'text'), ('queue_length', 'bigint'), ('newest_msg_age_sec', 'integer'),
           ('oldest_msg_age_sec', 'integer'), ('total_messages', 'bigint'),
           ('scrape_time', 'timestamp with time zone'), ('queue_visible_length', 'bigint')$$,
  'pgmq.metrics_result ends with queue_visible_length');

select schema_privs_are('pgmq', 'pg_monitor', array['USAGE'], 'pg_monitor may use the schema');
select table_privs_are('pgmq', 'meta', 'pg_monitor', array['SELECT'], 'pg_monitor may read meta');

-- Default privileges: queues created later are readable by pg_monitor too.
select lives_ok($$select pgmq.create('later')$$, 'create a queue after the install');
select table_privs_are('pgmq', 'q_later', 'pg_monitor', array['SELECT'],
                       'pg_monitor may read a later queue table');
select sequence_privs_are('pgmq', 'q_later_msg_id_seq', 'pg_monitor', array['SELECT'],
                          'pg_monitor may read a later queue sequence');

select is_empty(
  $$select 1 from pg_class c, aclexplode(c.relacl) a
    where c.relnamespace = 'pgmq'::regnamespace and a.grantee = 0$$,
  'nothing in pgmq is granted to PUBLIC');

select * from finish();
rollback;
