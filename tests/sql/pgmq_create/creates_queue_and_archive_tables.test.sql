-- create(N): queue table, archive table, identity sequence, indexes and the meta row.
begin;
select plan(13);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');

select results_eq(
  $$select queue_name::text, is_partitioned, is_unlogged, created_at = now() from pgmq.meta$$,
  $$values ('jobs', false, false, true)$$,
  'one meta row: not partitioned, not unlogged, created now');

select results_eq(
  $$select a.attname::text collate "default", format_type(a.atttypid, a.atttypmod), a.attnotnull,
           a.attidentity::text, pg_get_expr(d.adbin, d.adrelid) collate "default"
    from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = 'pgmq.q_jobs'::regclass and a.attnum > 0 and not a.attisdropped
    order by a.attnum$$,
  $$values ('msg_id', 'bigint', true, 'a', null::text),
           ('read_ct', 'integer', true, '', '0'),
           ('enqueued_at', 'timestamp with time zone', true, '', 'now()'),
           ('vt', 'timestamp with time zone', true, '', null),
           ('message', 'jsonb', false, '', null),
           ('headers', 'jsonb', false, '', null)$$,
  'q_jobs has the documented columns; msg_id is GENERATED ALWAYS AS IDENTITY, vt has no default');

select results_eq(
  $$select a.attname::text collate "default", format_type(a.atttypid, a.atttypmod), a.attnotnull,
           a.attidentity::text, pg_get_expr(d.adbin, d.adrelid) collate "default"
    from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = 'pgmq.a_jobs'::regclass and a.attnum > 0 and not a.attisdropped
    order by a.attnum$$,
  $$values ('msg_id', 'bigint', true, '', null::text),
           ('read_ct', 'integer', true, '', '0'),
           ('enqueued_at', 'timestamp with time zone', true, '', 'now()'),
           ('archived_at', 'timestamp with time zone', true, '', 'now()'),
           ('vt', 'timestamp with time zone', true, '', null),
           ('message', 'jsonb', false, '', null),
           ('headers', 'jsonb', false, '', null)$$,
  'a_jobs has the documented columns; msg_id is a plain bigint');

select col_is_pk('pgmq', 'q_jobs', 'msg_id', 'q_jobs.msg_id is the primary key');
select col_is_pk('pgmq', 'a_jobs', 'msg_id', 'a_jobs.msg_id is the primary key');

select results_eq(
  $$select indexname::text collate "default", indexdef from pg_indexes
    where schemaname = 'pgmq' and tablename = 'q_jobs' order by 1$$,
  $$values ('q_jobs_pkey', 'CREATE UNIQUE INDEX q_jobs_pkey ON pgmq.q_jobs USING btree (msg_id)'),
           ('q_jobs_vt_idx', 'CREATE INDEX q_jobs_vt_idx ON pgmq.q_jobs USING btree (vt)')$$,
  'q_jobs has q_jobs_pkey and q_jobs_vt_idx');
select results_eq(
  $$select indexname::text collate "default", indexdef from pg_indexes
    where schemaname = 'pgmq' and tablename = 'a_jobs' order by 1$$,
  $$values ('a_jobs_pkey', 'CREATE UNIQUE INDEX a_jobs_pkey ON pgmq.a_jobs USING btree (msg_id)'),
           ('archived_at_idx_jobs', 'CREATE INDEX archived_at_idx_jobs ON pgmq.a_jobs USING btree (archived_at)')$$,
  'a_jobs has a_jobs_pkey and archived_at_idx_jobs');

select has_sequence('pgmq', 'q_jobs_msg_id_seq', 'the identity sequence is q_jobs_msg_id_seq');
select is(pg_get_serial_sequence('pgmq.q_jobs', 'msg_id'), 'pgmq.q_jobs_msg_id_seq',
          'q_jobs_msg_id_seq backs q_jobs.msg_id');

select results_eq(
  $$select relname::text collate "default", relpersistence::text from pg_class
    where relnamespace = 'pgmq'::regnamespace and relkind = 'r' order by 1$$,
  $$values ('a_jobs', 'p'), ('meta', 'p'), ('q_jobs', 'p')$$,
  'both tables are regular logged tables and nothing else was created');

select throws_ok($$insert into pgmq.q_jobs (msg_id, vt) values (1, now())$$, '428C9', 'cannot insert a non-DEFAULT value into column "msg_id"',
                 'msg_id cannot be supplied by hand (GENERATED ALWAYS)');
select throws_ok($$insert into pgmq.q_jobs (message) values ('{}')$$, '23502', 'null value in column "vt" of relation "q_jobs" violates not-null constraint',
                 'vt has no default: every insert must supply it');

select * from finish();
rollback;
