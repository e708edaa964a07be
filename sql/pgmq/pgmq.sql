-- pgflow's own implementation of the PGMQ 1.5.1 queue API, in plain SQL and PL/pgSQL.
--
-- The pgflow core sits on PGMQ (architecture spec §2). Managed servers ship the `pgmq`
-- extension and we use it there; Debian has no package for it, so when the server lacks
-- the extension the migration runner (src/migrate/migrate.cc, ensure_pgmq) executes this file
-- once, as one transaction. It was written from the documented behaviour of PGMQ 1.5.1 in its
-- SQL-only (non-extension) install mode (reference/pgmq.md), not copied from upstream, and keeps
-- the same schema, table layouts, function signatures, argument names, name validation, length
-- limit and case rules, so the core and user code behave identically on both.
--
-- Not provided: partitioned queues (they need pg_partman; create_partitioned and
-- convert_archive_partitioned raise the documented error) and the pg_partman helper functions.
--
-- Rules for this file: no BEGIN/COMMIT and no psql meta-commands (the runner sends it in one
-- PQexec inside its own transaction); every function pins search_path to pg_catalog, pg_temp
-- (pg_temp named, and last: with an empty path PostgreSQL would search the caller's temporary
-- schema first for type names, docs/security.md) and names objects with their schema, so a
-- caller's search_path can never redirect them; queue-derived identifiers are always quoted
-- with format('%I').

create schema if not exists pgmq;

-- One row per spelling passed to create: queue_name is stored exactly as given, while the
-- tables are shared by every spelling (see format_table_name).
create table pgmq.meta (
  queue_name varchar not null constraint meta_queue_name_key unique,
  is_partitioned boolean not null,
  is_unlogged boolean not null,
  created_at timestamptz not null default now()
);

create type pgmq.message_record as (
  msg_id bigint,
  read_ct integer,
  enqueued_at timestamptz,
  vt timestamptz,
  message jsonb,
  headers jsonb
);

create type pgmq.queue_record as (
  queue_name varchar,
  is_partitioned boolean,
  is_unlogged boolean,
  created_at timestamptz
);

create type pgmq.metrics_result as (
  queue_name text,
  queue_length bigint,
  newest_msg_age_sec integer,
  oldest_msg_age_sec integer,
  total_messages bigint,
  scrape_time timestamptz,
  queue_visible_length bigint
);

-- ---------------------------------------------------------------------------------------------
-- Internal helpers (public in PGMQ, but not API)
-- ---------------------------------------------------------------------------------------------

create function pgmq._extension_exists(extension_name text)
returns boolean
language sql stable
set search_path = pg_catalog, pg_temp
as $function$
  select exists (select 1 from pg_catalog.pg_extension e where e.extname = extension_name);
$function$;

-- Matches by relname only, as PGMQ does; always false for this bundled install, where nothing
-- is an extension member.
create function pgmq._belongs_to_pgmq(table_name text)
returns boolean
language sql stable
set search_path = pg_catalog, pg_temp
as $function$
  select exists (
    select 1
    from pg_catalog.pg_depend d
    join pg_catalog.pg_extension e on e.oid = d.refobjid
    join pg_catalog.pg_class c on c.oid = d.objid
    where d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
      and d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
      and d.deptype = 'e'
      and e.extname = 'pgmq'
      and c.relname = table_name
  );
$function$;

-- Every function maps a queue name through here, so the character check guards all of them.
-- Physical names are lower-cased: 'Orders', 'ORDERS' and 'orders' share one table.
create function pgmq.format_table_name(queue_name text, prefix text)
returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $function$
begin
  if queue_name ~ '[$;'']|--' then
    raise exception 'queue name contains invalid characters: $, ;, --, or \''';
  end if;
  return pg_catalog.lower(prefix || '_' || queue_name);
end;
$function$;

-- 47 characters keep the longest derived identifiers ('archived_at_idx_' || name and partman's
-- 'template_pgmq_q_' || name) within 63 bytes. The test and its off-by-one message are 1.5.1's.
create function pgmq.validate_queue_name(queue_name text)
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $function$
begin
  if pg_catalog.length(queue_name) >= 48 then
    raise exception 'queue name is too long, maximum length is 48 characters';
  end if;
end;
$function$;

create function pgmq._ensure_pg_partman_installed()
returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $function$
begin
  if not pgmq._extension_exists('pg_partman') then
    raise exception 'pg_partman is required for partitioned queues';
  end if;
end;
$function$;

-- ---------------------------------------------------------------------------------------------
-- Queue management
-- ---------------------------------------------------------------------------------------------

-- Every step is IF NOT EXISTS / ON CONFLICT DO NOTHING: repeating a create is harmless, and a
-- differently-cased create of an existing queue only adds its own meta row and archive index.
-- Only the queue table can be unlogged: archived messages are history and must survive a crash.
-- (Internal: create_non_partitioned and create_unlogged are the API.)
create function pgmq._create_queue(queue_name text, unlogged boolean)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text;
  atable text;
begin
  perform pgmq.validate_queue_name(queue_name);
  qtable := pgmq.format_table_name(queue_name, 'q');
  atable := pgmq.format_table_name(queue_name, 'a');

  execute pg_catalog.format(
    $sql$
    create %s table if not exists pgmq.%I (
      msg_id bigint primary key generated always as identity,
      read_ct integer not null default 0,
      enqueued_at timestamptz not null default now(),
      vt timestamptz not null,
      message jsonb,
      headers jsonb
    )
    $sql$, case when unlogged then 'unlogged' else '' end, qtable);

  execute pg_catalog.format(
    $sql$
    create table if not exists pgmq.%I (
      msg_id bigint primary key,
      read_ct integer not null default 0,
      enqueued_at timestamptz not null default now(),
      archived_at timestamptz not null default now(),
      vt timestamptz not null,
      message jsonb,
      headers jsonb
    )
    $sql$, atable);

  execute pg_catalog.format('create index if not exists %I on pgmq.%I (vt asc)',
                            qtable || '_vt_idx', qtable);
  -- Built from the raw name, as in PGMQ, hence case-preserving.
  execute pg_catalog.format('create index if not exists %I on pgmq.%I (archived_at)',
                            'archived_at_idx_' || queue_name, atable);

  insert into pgmq.meta (queue_name, is_partitioned, is_unlogged)
  values (_create_queue.queue_name, false, unlogged)
  on conflict on constraint meta_queue_name_key do nothing;
end;
$function$;

create function pgmq.create_non_partitioned(queue_name text)
returns void
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select pgmq._create_queue(queue_name, false);
$function$;

create function pgmq."create"(queue_name text)
returns void
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select pgmq.create_non_partitioned(queue_name);
$function$;

create function pgmq.create_unlogged(queue_name text)
returns void
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select pgmq._create_queue(queue_name, true);
$function$;

-- Partitioned queues need pg_partman, which this bundled layer does not drive. Without partman
-- the documented error is raised; with it we still refuse rather than half-build a queue.
create function pgmq.create_partitioned(
  queue_name text,
  partition_interval text default '10000',
  retention_interval text default '100000'
)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  perform pgmq.validate_queue_name(queue_name);
  perform pgmq.format_table_name(queue_name, 'q');
  perform pgmq._ensure_pg_partman_installed();
  raise exception 'partitioned queues are not supported by pgflow''s bundled PGMQ; install the pgmq extension'
    using errcode = 'feature_not_supported';
end;
$function$;

create function pgmq.convert_archive_partitioned(
  table_name text,
  partition_interval text default '10000',
  retention_interval text default '100000',
  leading_partition integer default 10
)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  perform pgmq.format_table_name(table_name, 'a');
  perform pgmq._ensure_pg_partman_installed();
  raise exception 'partitioned archives are not supported by pgflow''s bundled PGMQ; install the pgmq extension'
    using errcode = 'feature_not_supported';
end;
$function$;

-- Detaching only matters for extension membership; in a SQL-only install there is nothing to
-- detach, so (as in PGMQ's SQL-only mode) this only checks the name.
create function pgmq.detach_archive(queue_name text)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  perform pgmq.format_table_name(queue_name, 'a');
end;
$function$;

-- SQL-only semantics: a missing queue is not an error (DROP ... IF EXISTS only notices) and the
-- result is true. Only the exact-spelling meta row goes; differently-cased rows stay behind.
create function pgmq.drop_queue(queue_name text)
returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text;
  atable text;
begin
  qtable := pgmq.format_table_name(queue_name, 'q');
  atable := pgmq.format_table_name(queue_name, 'a');

  execute pg_catalog.format('drop table if exists pgmq.%I', qtable);
  execute pg_catalog.format('drop table if exists pgmq.%I', atable);

  delete from pgmq.meta m where m.queue_name = drop_queue.queue_name;
  return true;
end;
$function$;

-- Deprecated in 1.5.0: partitioning is read from meta now, the flag is ignored.
create function pgmq.drop_queue(queue_name text, partitioned boolean)
returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  raise warning 'drop_queue(queue_name, partitioned) is deprecated; use drop_queue(queue_name)';
  return pgmq.drop_queue(queue_name);
end;
$function$;

-- Taking the ACCESS EXCLUSIVE lock before counting (TRUNCATE needs it anyway) makes the returned
-- count exactly the rows removed: no send can slip in between count and truncate.
create function pgmq.purge_queue(queue_name text)
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
  purged bigint;
begin
  execute pg_catalog.format('lock table pgmq.%I in access exclusive mode', qtable);
  execute pg_catalog.format('select pg_catalog.count(*) from pgmq.%I', qtable) into purged;
  execute pg_catalog.format('truncate table pgmq.%I', qtable);
  return purged;
end;
$function$;

create function pgmq.list_queues()
returns setof pgmq.queue_record
language sql stable
set search_path = pg_catalog, pg_temp
as $function$
  select m.queue_name, m.is_partitioned, m.is_unlogged, m.created_at from pgmq.meta m;
$function$;

-- total_messages comes from the identity sequence, so it counts every message ever sent,
-- including purged, deleted and archived ones. The name is echoed as passed.
create function pgmq.metrics(queue_name text)
returns pgmq.metrics_result
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
  result pgmq.metrics_result;
begin
  execute pg_catalog.format(
    $sql$
    with q as (
      select pg_catalog.count(*) as queue_length,
             pg_catalog.count(*) filter (where vt <= pg_catalog.now()) as queue_visible_length,
             extract(epoch from pg_catalog.now() - pg_catalog.max(enqueued_at))::integer as newest_age,
             extract(epoch from pg_catalog.now() - pg_catalog.min(enqueued_at))::integer as oldest_age
      from pgmq.%I
    ),
    s as (
      select case when is_called then last_value else 0 end as total from pgmq.%I
    )
    select $1, q.queue_length, q.newest_age, q.oldest_age, s.total, pg_catalog.now(),
           q.queue_visible_length
    from q, s
    $sql$, qtable, qtable || '_msg_id_seq')
  into result
  using queue_name;
  return result;
end;
$function$;

-- One meta row whose tables are gone (see drop_queue) makes the whole call fail, as in PGMQ.
create function pgmq.metrics_all()
returns setof pgmq.metrics_result
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  q record;
begin
  for q in select m.queue_name from pgmq.meta m loop
    return next pgmq.metrics(q.queue_name);
  end loop;
end;
$function$;

-- ---------------------------------------------------------------------------------------------
-- Sending. The (…, headers, delay timestamptz) forms do the work; the other overloads only
-- compute the visibility time. Delays count from clock_timestamp(), the actual send instant, so
-- time already spent in the sending transaction does not shorten them; enqueued_at is the
-- column default now().
-- ---------------------------------------------------------------------------------------------

create function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  return query execute pg_catalog.format(
    'insert into pgmq.%I (vt, message, headers) values ($1, $2, $3) returning msg_id',
    pgmq.format_table_name(queue_name, 'q'))
  using delay, msg, headers;
end;
$function$;

create function pgmq.send(queue_name text, msg jsonb)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send(queue_name, msg, null::jsonb, pg_catalog.clock_timestamp());
$function$;

create function pgmq.send(queue_name text, msg jsonb, delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send(queue_name, msg, null::jsonb,
                          pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay));
$function$;

create function pgmq.send(queue_name text, msg jsonb, delay timestamptz)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send(queue_name, msg, null::jsonb, delay);
$function$;

create function pgmq.send(queue_name text, msg jsonb, headers jsonb)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send(queue_name, msg, headers, pg_catalog.clock_timestamp());
$function$;

create function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send(queue_name, msg, headers,
                          pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay));
$function$;

-- One INSERT … SELECT with both unnest calls in the select list: they advance in lockstep, so
-- messages and headers pair by position, the shorter array is padded with NULLs, and every row
-- of the batch gets the same vt.
create function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  return query execute pg_catalog.format(
    $sql$
    insert into pgmq.%I (vt, message, headers)
    select $1, pg_catalog.unnest($2), pg_catalog.unnest($3)
    returning msg_id
    $sql$, pgmq.format_table_name(queue_name, 'q'))
  using delay, msgs, headers;
end;
$function$;

create function pgmq.send_batch(queue_name text, msgs jsonb[])
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send_batch(queue_name, msgs, null::jsonb[], pg_catalog.clock_timestamp());
$function$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send_batch(queue_name, msgs, null::jsonb[],
                                pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay));
$function$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send_batch(queue_name, msgs, null::jsonb[], delay);
$function$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send_batch(queue_name, msgs, headers, pg_catalog.clock_timestamp());
$function$;

create function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $function$
  select * from pgmq.send_batch(queue_name, msgs, headers,
                                pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay));
$function$;

-- ---------------------------------------------------------------------------------------------
-- Reading and consuming
-- ---------------------------------------------------------------------------------------------

-- FOR UPDATE SKIP LOCKED is what keeps concurrent readers apart: a row another transaction is
-- reading (or archiving, deleting, re-timing) is skipped instead of waited for, and once that
-- transaction commits the new vt hides the row. read_ct and vt are returned after the update.
create function pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb default '{}')
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
begin
  return query execute pg_catalog.format(
    $sql$
    with picked as (
      select msg_id
      from pgmq.%I
      where vt <= pg_catalog.clock_timestamp()
        and ($3 = '{}'::jsonb or message @> $3)
      order by msg_id
      limit $2
      for update skip locked
    )
    update pgmq.%I m
    set vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $1),
        read_ct = m.read_ct + 1
    from picked
    where m.msg_id = picked.msg_id
    returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers
    $sql$, qtable, qtable)
  using vt, qty, conditional;
end;
$function$;

-- Each iteration is a separate statement, so under READ COMMITTED it sees messages committed
-- while we poll. The deadline is checked before each read, as in PGMQ (max_poll_seconds <= 0
-- therefore returns nothing); the interval is divided as a fraction, never as integers.
create function pgmq.read_with_poll(
  queue_name text,
  vt integer,
  qty integer,
  max_poll_seconds integer default 5,
  poll_interval_ms integer default 100,
  conditional jsonb default '{}'
)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  stop_at timestamptz :=
    pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => max_poll_seconds);
begin
  loop
    if pg_catalog.clock_timestamp() >= stop_at then
      return;
    end if;
    return query select * from pgmq.read(queue_name, vt, qty, conditional);
    if found then
      return;
    end if;
    perform pg_catalog.pg_sleep(poll_interval_ms::double precision / 1000);
  end loop;
end;
$function$;

-- At-most-once: the row is deleted, not archived, and read_ct is left as it was.
create function pgmq.pop(queue_name text)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
begin
  return query execute pg_catalog.format(
    $sql$
    with picked as (
      select msg_id
      from pgmq.%I
      where vt <= pg_catalog.clock_timestamp()
      order by msg_id
      limit 1
      for update skip locked
    )
    delete from pgmq.%I m
    using picked
    where m.msg_id = picked.msg_id
    returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers
    $sql$, qtable, qtable);
end;
$function$;

-- Sets the deadline whatever the message's state: extends a lease, or (vt = 0) releases it.
create function pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  return query execute pg_catalog.format(
    $sql$
    update pgmq.%I
    set vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2)
    where msg_id = $1
    returning msg_id, read_ct, enqueued_at, vt, message, headers
    $sql$, pgmq.format_table_name(queue_name, 'q'))
  using msg_id, vt;
end;
$function$;

-- ---------------------------------------------------------------------------------------------
-- Finishing messages. Neither archive nor delete looks at vt or at who read the message: there
-- is no receipt handle in PGMQ. Both report only the ids that were actually in the queue.
-- ---------------------------------------------------------------------------------------------

-- One statement, so a message is never in both tables or in neither.
create function pgmq.archive(queue_name text, msg_id bigint)
returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  moved bigint;
begin
  execute pg_catalog.format(
    $sql$
    with gone as (
      delete from pgmq.%I where msg_id = $1
      returning msg_id, vt, read_ct, enqueued_at, message, headers
    )
    insert into pgmq.%I (msg_id, vt, read_ct, enqueued_at, message, headers)
    select msg_id, vt, read_ct, enqueued_at, message, headers from gone
    returning msg_id
    $sql$, pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(queue_name, 'a'))
  into moved
  using msg_id;
  return moved is not null;
end;
$function$;

create function pgmq.archive(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  return query execute pg_catalog.format(
    $sql$
    with gone as (
      delete from pgmq.%I where msg_id = any ($1)
      returning msg_id, vt, read_ct, enqueued_at, message, headers
    )
    insert into pgmq.%I (msg_id, vt, read_ct, enqueued_at, message, headers)
    select msg_id, vt, read_ct, enqueued_at, message, headers from gone
    returning msg_id
    $sql$, pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(queue_name, 'a'))
  using msg_ids;
end;
$function$;

create function pgmq.delete(queue_name text, msg_id bigint)
returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
declare
  deleted bigint;
begin
  execute pg_catalog.format('delete from pgmq.%I where msg_id = $1 returning msg_id',
                            pgmq.format_table_name(queue_name, 'q'))
  into deleted
  using msg_id;
  return deleted is not null;
end;
$function$;

create function pgmq.delete(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $function$
begin
  return query execute pg_catalog.format(
    'delete from pgmq.%I where msg_id = any ($1) returning msg_id',
    pgmq.format_table_name(queue_name, 'q'))
  using msg_ids;
end;
$function$;

-- ---------------------------------------------------------------------------------------------
-- Privileges: monitoring roles may look at queues (including ones created later); nothing is
-- granted to PUBLIC beyond PostgreSQL's default EXECUTE on functions.
-- ---------------------------------------------------------------------------------------------

grant usage on schema pgmq to pg_monitor;
grant select on all tables in schema pgmq to pg_monitor;
grant select on all sequences in schema pgmq to pg_monitor;
alter default privileges in schema pgmq grant select on tables to pg_monitor;
alter default privileges in schema pgmq grant select on sequences to pg_monitor;

-- The migration runner recognises this install by the comment's prefix: keep it last.
comment on schema pgmq is 'pgflow bundled PGMQ 1.5.1 API (pure SQL)';
