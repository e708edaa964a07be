#!/usr/bin/env bash
# large_outputs.sh [--sizes "1 10 100"] [--rounds R] [--before VERSION]
#
# What reporting a large result costs the server, at two schema versions on one cluster: a
# database migrated to VERSION (default 23) and one migrated to the newest schema. For each
# size S (megabytes of output; default 1, 10 and 100), each round, in each database:
#   single  a one-step flow's task, claimed (pgmq.read + claim_tasks), is reported with
#           complete_tasks (the worker's statement) and an output of S MB: the task, its step
#           and its run complete, storing the output three times (after six untimed results
#           with small outputs: a worker's session has planned complete_task's statements);
#   map     a root map of 100 tasks, claimed, 98 of them reported (untimed) with outputs of
#           S/100 MB each; then the last 2 in one complete_tasks call (its set-based path): the
#           step completes with the S MB array of their outputs, and the run with it.
# Each output is hexadecimal text (md5 digests) of its own, which neither pglz nor lz4 can
# shrink much: the worst case for storing it. The time is the call's, measured in the server
# (clock_timestamp around it; the output is already in memory), in milliseconds. R rounds
# (default 3), alternating which database goes first; prints the median of each and
# after/before. Needs the pgflow program.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow large_outputs
sizes="1 10 100"; rounds=3; before=23
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
start_bench_cluster "$root/build/bench-sql-cluster"
for d in before after; do
  "${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists lo_$d" \
    -c "create database lo_$d" >/dev/null
done
"$pgflow" migrate --database "$base/lo_before" --to "$before" >/dev/null
"$pgflow" migrate --database "$base/lo_after" >/dev/null

for d in before after; do
  "${psql[@]}" "$base/lo_$d" >/dev/null <<'SQL'
select pgflow.create_flow('one');
select pgflow.add_step('one', 'emit');
select pgflow.create_flow('agg');
select pgflow.add_step('agg', 'items', step_type => 'map');
select pgflow.register_worker(gen_random_uuid(), f || '-worker', f, f, pgflow.worker_protocol())
from unnest(array['one', 'agg']) f;

-- `p_bytes` of hexadecimal text, different for each `p_seed`.
create function public.bench_text(p_bytes bigint, p_seed int) returns text language sql as $$
  select left(string_agg(md5(p_seed || ':' || i), ''), p_bytes::int)
  from generate_series(1, (p_bytes + 31) / 32) i;
$$;

-- Starts a run of `p_flow` and claims all its tasks as its worker; returns their results,
-- each with the output {"s": <p_bytes of text of its own>}.
create function public.bench_claimed(p_flow text, p_input jsonb, p_bytes bigint) returns jsonb
language plpgsql as $$
begin
  perform pgflow.start_flow(p_flow, p_input);
  return (select jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
                                              'task_index', c.task_index,
                                              'output', jsonb_build_object(
                                                's', public.bench_text(p_bytes, c.task_index)))
                           order by c.task_index)
          from pgflow.claim_tasks(p_flow, p_flow,
                                  array(select m.msg_id from pgmq.read(p_flow, 600, 1000) m),
                                  (select w.worker_id from pgflow.workers w where w.queue_name = p_flow),
                                  null, gen_random_uuid()) c
          where c.outcome = 'claimed');
end;
$$;

-- Milliseconds complete_tasks takes for `p_results` (in memory before the clock starts).
create function public.bench_report(p_results jsonb) returns numeric language plpgsql as $$
declare
  v_results jsonb := p_results || '[]'::jsonb;  -- a value of its own, detoasted
  v_t0 timestamptz := clock_timestamp();
begin
  perform count(*) from pgflow.complete_tasks(v_results);
  return round(extract(epoch from clock_timestamp() - v_t0) * 1000, 1);
end;
$$;

-- One measurement of `p_case` ('single' or 'map') with p_mb megabytes of output in all.
create function public.bench_case(p_case text, p_mb int) returns numeric language plpgsql as $$
declare
  v_results jsonb;
begin
  if p_case = 'single' then
    -- (small results first, as in a worker's long-lived session: the first five executions
    -- of a statement are planned with their parameters' values, a large value included)
    for i in 1 .. 6 loop
      perform count(*) from pgflow.complete_tasks(public.bench_claimed('one', '{}', 10));
    end loop;
    v_results := public.bench_claimed('one', '{}', p_mb * 1000000::bigint);
  else
    v_results := public.bench_claimed('agg', (select jsonb_agg(i) from generate_series(1, 100) i),
                                      p_mb * 10000::bigint);
    perform count(*) from pgflow.complete_tasks(
      (select jsonb_agg(r order by n) from jsonb_array_elements(v_results) with ordinality x(r, n)
       where n <= 98));
    v_results := (select jsonb_agg(r order by n)
                  from jsonb_array_elements(v_results) with ordinality x(r, n) where n > 98);
  end if;
  return public.bench_report(v_results);
end;
$$;
SQL
done

declare -A times
for ((r = 1; r <= rounds; r++)); do
  order=(before after)
  ((r % 2 == 0)) && order=(after before)
  for mb in $sizes; do
    for c in single map; do
      for d in "${order[@]}"; do
        ms=$("${psql[@]}" "$base/lo_$d" -c "select public.bench_case('$c', $mb)")
        times[$c,$mb,$d]+="$ms "
        echo "round $r/$rounds: $c $mb MB, $d: $ms ms" >&2
      done
    done
  done
  for d in before after; do  # the rounds' runs go, so that every round starts alike
    "${psql[@]}" "$base/lo_$d" >/dev/null -c "set client_min_messages = warning" \
      -c "truncate pgflow.runs, pgflow.step_states, pgflow.step_tasks cascade" -c "vacuum analyze"
  done
done

printf 'complete_tasks with large outputs, schema %s (before) and newest (after), median of %s rounds (ms):\n' \
  "$before" "$rounds"
printf '  %-7s %6s %10s %10s %8s\n' case MB before after after/before
for mb in $sizes; do
  for c in single map; do
    b=$(printf '%s\n' ${times[$c,$mb,before]} | median)
    a=$(printf '%s\n' ${times[$c,$mb,after]} | median)
    printf '  %-7s %6s %10s %10s %8s\n' "$c" "$mb" "$b" "$a" "$(awk "BEGIN {printf \"%.2f\", $a / $b}")"
  done
done
