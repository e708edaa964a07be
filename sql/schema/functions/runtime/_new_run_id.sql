-- A new run id: a time-ordered UUID (version 7: the first 48 bits are the Unix time in
-- milliseconds, the rest random, as RFC 9562 lays it out; since 0015, version 4 before). Run ids
-- lead the primary keys of runs, step_states and step_tasks: random ones sent every start's
-- inserts to a random leaf page of each, so with more history than fits in memory a start read
-- and dirtied pages all over the indexes (and wrote each one's full image to WAL once per
-- checkpoint); time-ordered ones append near the right edge. A run id still says nothing a
-- reader of the run cannot see (its started_at).
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so each
-- call parsed and planned its body again; PL/pgSQL keeps the expression's plan for the session.
-- Called by: start_flow_by_slug (runs without a caller's id), _start_run_idempotent, the default
-- of runs.run_id.
create or replace function pgflow._new_run_id() returns uuid
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  -- gen_random_uuid() gives the random bits and the variant; the version nibble becomes 7
  -- (0100 -> 0111: bits 52 and 53 of the bytea, numbered from each byte's low bit).
  return encode(set_bit(set_bit(
           overlay(uuid_send(gen_random_uuid())
                   placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                   from 1 for 6),
           52, 1), 53, 1), 'hex')::uuid;
end;
$$;
