-- The shared hostile-input table tests/data/hostile_inputs.tsv (the C++ test
-- tests/integration/hostile_input_test.cc reads the same file; tests/data/README.md describes
-- it), and helpers to turn its values into SQL. Included (\i) by every file of this folder.
create temp table hostile (n int generated always as identity, name text, target text, encoding text,
                           value text, cpp_code text, cpp_message text, sqlstate text, sql_message text);
\copy hostile (name, target, encoding, value, cpp_code, cpp_message, sqlstate, sql_message) from '../../data/hostile_inputs.tsv' with (format text, header true)

-- The value of a case as an SQL expression of type text. Bytes PostgreSQL text cannot hold
-- (encoding hex, generator json_bytes) become convert_from(...), which refuses them with 22021
-- as the server refuses such a parameter before any function runs.
create function pg_temp.value_sql(encoding text, value text) returns text language plpgsql immutable as $$
declare
  g text[] := string_to_array(value, ':');
begin
  if encoding = 'text' then
    return quote_literal(value);
  elsif encoding = 'hex' then
    return format('convert_from(%L::bytea, %L)', '\x' || value, 'UTF8');
  elsif g[1] = 'repeat' then
    return format('repeat(%L, %s)', g[2], g[3]::int);
  elsif g[1] = 'json_string' then
    return format('jsonb_build_object(%L, repeat(%L, %s))::text', 's', 'x', g[2]::int);
  elsif g[1] = 'json_bytes' then
    return format('jsonb_build_object(%L, convert_from(%L::bytea, %L))::text', 's', '\x' || g[2], 'UTF8');
  elsif g[1] = 'json_double' then
    -- what a serialiser that does not check writes for NaN and the infinities
    return quote_literal(format('{"x": %s}', case g[2] when 'nan' then 'NaN' when 'inf' then 'Infinity' else '-Infinity' end));
  elsif g[1] = 'json_nested_arrays' then
    return format('repeat(%L, %s) || repeat(%L, %s)', '[', g[2]::int, ']', g[2]::int);
  elsif g[1] = 'json_nested_objects' then
    return format('repeat(%L, %s) || %L || repeat(%L, %s)', '{"a":', g[2]::int - 1, '{}', '}', g[2]::int - 1);
  end if;
  raise exception 'hostile_inputs.tsv: unknown generator %', value;
end $$;

-- The value as text, or NULL when it cannot be text (the expression raises).
create function pg_temp.value_text(encoding text, value text) returns text language plpgsql as $$
declare
  v text;
begin
  execute 'select ' || pg_temp.value_sql(encoding, value) into v;
  return v;
exception when sqlstate '22021' then
  return null;
end $$;

-- The message the database gives a refused case: its sql_message, %s standing for the value.
create function pg_temp.expected_message(h hostile) returns text language sql as $$
  select format(h.sql_message, pg_temp.value_text(h.encoding, h.value))
$$;

-- Runs a statement in a subtransaction that is always rolled back; returns 'ok: <its first
-- value>' or '<SQLSTATE>: <message>'.
create function pg_temp.attempt(stmt text) returns text language plpgsql as $$
declare
  v text;
begin
  execute stmt into v;
  raise exception using errcode = 'P0099', message = coalesce(v, '<null>');
exception
  when sqlstate 'P0099' then return 'ok: ' || sqlerrm;
  when others then return sqlstate || ': ' || sqlerrm;
end $$;

-- Runs a statement and returns its first value as text ('<null>' for NULL).
create function pg_temp.value_of(stmt text) returns text language plpgsql as $$
declare
  v text;
begin
  execute stmt into v;
  return coalesce(v, '<null>');
end $$;

-- Everything a refused call could have written: row counts and digests of pgflow's tables and
-- of every PGMQ queue table.
create function pg_temp.snapshot() returns text language plpgsql as $$
declare
  v_out text;
  v_queue record;
  v_count bigint;
begin
  select concat_ws(' | ',
    (select count(*) || ' flows ' || md5(coalesce(string_agg(md5(f::text), ',' order by f.flow_slug), '')) from pgflow.flows f),
    (select count(*) || ' steps' from pgflow.steps),
    (select count(*) || ' aliases ' || coalesce(string_agg(a.flow_alias || '=' || a.flow_slug, ','), '') from pgflow.flow_aliases a),
    (select count(*) || ' runs ' || md5(coalesce(string_agg(md5(r::text), ',' order by r.run_id), '')) from pgflow.runs r),
    (select count(*) || ' step states ' || md5(coalesce(string_agg(md5(s::text), ',' order by s.run_id, s.step_slug), '')) from pgflow.step_states s),
    (select count(*) || ' tasks ' || md5(coalesce(string_agg(md5(t::text), ',' order by t.run_id, t.step_slug), '')) from pgflow.step_tasks t),
    (select count(*) || ' workers' from pgflow.workers),
    (select count(*) || ' functions' from pgflow.worker_functions))
  into v_out;
  for v_queue in select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                 where n.nspname = 'pgmq' and c.relkind = 'r' and c.relname ~ '^[qa]_' order by c.relname loop
    execute format('select count(*) from pgmq.%I', v_queue.relname) into v_count;
    v_out := v_out || format(' | %s %s', v_queue.relname, v_count);
  end loop;
  return v_out;
end $$;

-- The flow the cases run against: one root step (a run has one task); a plain flow, so it is
-- also its own alias.
select pgflow.create_flow('hHost', max_attempts => 1) \g /dev/null
select pgflow.add_step('hHost', 'emit') \g /dev/null
