-- The function surface of PGMQ 1.5.1 (argument names matter for named-argument calls) and the
-- project's security rules for it.
begin;
select plan(5);

select set_eq(
  $$select p.proname::text, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
    from pg_proc p where p.pronamespace = 'pgmq'::regnamespace$$,
  $$values
    ('_belongs_to_pgmq', 'table_name text', 'boolean'),
    ('_create_queue', 'queue_name text, unlogged boolean', 'void'),
    ('_ensure_pg_partman_installed', '', 'void'),
    ('_extension_exists', 'extension_name text', 'boolean'),
    ('archive', 'queue_name text, msg_id bigint', 'boolean'),
    ('archive', 'queue_name text, msg_ids bigint[]', 'SETOF bigint'),
    ('convert_archive_partitioned', 'table_name text, partition_interval text DEFAULT ''10000''::text, retention_interval text DEFAULT ''100000''::text, leading_partition integer DEFAULT 10', 'void'),
    ('create', 'queue_name text', 'void'),
    ('create_non_partitioned', 'queue_name text', 'void'),
    ('create_partitioned', 'queue_name text, partition_interval text DEFAULT ''10000''::text, retention_interval text DEFAULT ''100000''::text', 'void'),
    ('create_unlogged', 'queue_name text', 'void'),
    ('delete', 'queue_name text, msg_id bigint', 'boolean'),
    ('delete', 'queue_name text, msg_ids bigint[]', 'SETOF bigint'),
    ('detach_archive', 'queue_name text', 'void'),
    ('drop_queue', 'queue_name text', 'boolean'),
    ('drop_queue', 'queue_name text, partitioned boolean', 'boolean'),
    ('format_table_name', 'queue_name text, prefix text', 'text'),
    ('list_queues', '', 'SETOF pgmq.queue_record'),
    ('metrics', 'queue_name text', 'pgmq.metrics_result'),
    ('metrics_all', '', 'SETOF pgmq.metrics_result'),
    ('pop', 'queue_name text', 'SETOF pgmq.message_record'),
    ('purge_queue', 'queue_name text', 'bigint'),
    ('read', 'queue_name text, vt integer, qty integer, conditional jsonb DEFAULT ''{}''::jsonb', 'SETOF pgmq.message_record'),
    ('read_with_poll', 'queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT ''{}''::jsonb', 'SETOF pgmq.message_record'),
    ('send', 'queue_name text, msg jsonb', 'SETOF bigint'),
    ('send', 'queue_name text, msg jsonb, delay integer', 'SETOF bigint'),
    ('send', 'queue_name text, msg jsonb, delay timestamp with time zone', 'SETOF bigint'),
    ('send', 'queue_name text, msg jsonb, headers jsonb', 'SETOF bigint'),
    ('send', 'queue_name text, msg jsonb, headers jsonb, delay integer', 'SETOF bigint'),
    ('send', 'queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[]', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[], delay integer', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[], delay timestamp with time zone', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[], headers jsonb[]', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[], headers jsonb[], delay integer', 'SETOF bigint'),
    ('send_batch', 'queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone', 'SETOF bigint'),
    ('set_vt', 'queue_name text, msg_id bigint, vt integer', 'SETOF pgmq.message_record'),
    ('validate_queue_name', 'queue_name text', 'void')
  $$,
  'pgmq has exactly the 1.5.1 functions we provide (plus our internal _create_queue), with their argument names, defaults and result types');

select is_empty(
  $$select p.oid::regprocedure from pg_proc p
    where p.pronamespace = 'pgmq'::regnamespace
      and not exists (select 1 from unnest(p.proconfig) c where c like 'search_path=%')$$,
  'every pgmq function pins its search_path');

select is_empty(
  $$select p.oid::regprocedure from pg_proc p
    where p.pronamespace = 'pgmq'::regnamespace and p.prosecdef$$,
  'no pgmq function is SECURITY DEFINER');

select is_empty(
  $$select p.oid::regprocedure from pg_proc p join pg_language l on l.oid = p.prolang
    where p.pronamespace = 'pgmq'::regnamespace and l.lanname not in ('sql', 'plpgsql')$$,
  'pgmq is pure SQL and PL/pgSQL');

-- A caller's search_path cannot redirect pgmq's own lookups (here: a shadowing lower()).
create schema shadow;
create function shadow.lower(text) returns text language sql as $$ select 'hijacked' $$;
set local search_path = shadow, pg_catalog, public;
select is(pgmq.format_table_name('Jobs', 'q'), 'q_jobs', 'a shadowing function on the caller''s search_path is not used');

select * from finish();
rollback;
