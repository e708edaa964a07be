#!/usr/bin/env bash
# compare_versions.sh [--from N] [--to M] [--rounds R] [--runs K] [--kinds "start single ..."]
#
# Compares the SQL hot path of two schema versions in one run: builds one database migrated to
# version N (default: the previous one) and one to version M (default: the newest) on a
# throwaway cluster with default settings, then alternates the same workloads on both, R times
# (default 5), each round on a fresh copy of its version's database and with the other version
# first than the round before (the second of a pair runs up to 15% slower or faster on this
# kind of machine, so a fixed order would bias the ratio), and prints the fastest and
# the median server time per task and the ratios M/N (the fastest round is the least disturbed
# by other load on the machine, so its ratio is the one to quote).
#
#   start   K runs of a 1-step flow started with start_flow (time per run)
#   states  the same with start_flow_with_states, as Client::start_flow starts a run (it returns
#           the run's state)
#   lean    the same with start_run, as Client::start_run starts a run (it returns the run id)
#   repeat  K repeated idempotent starts (start_run_idempotent with keys that already have runs,
#           started and committed before the timed block; schema 0017 and later)
#   single  K runs of a 1-step flow started, then claimed (10 per claim_tasks, with a claim id
#           since 0014) and completed as that version's worker reports them (complete_tasks per
#           claim since 0006, else complete_task per task)
#   dag     K/20 runs of fetch -> process (map over 100) -> total -> report (+ count), drained
#
# Each workload runs inside one plpgsql block per round (no network, no commits), so it measures
# the CPU cost of pgflow's functions, which is what a change to them moves. Commit and WAL costs
# are the same for both versions and are measured end to end by pgflow_bench.
# Needs the pgflow binary (built by scripts/test.sh or scripts/bench.sh) for `pgflow migrate`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow compare_versions
latest=$(ls "$root/sql/migrations" | sed -n 's/^\([0-9]\{4\}\)_.*/\1/p' | tail -n 1)
to=$((10#$latest)); from=$((to - 1)); rounds=5; runs=2000; kinds="start states lean single dag"
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
start_bench_cluster "$root/build/bench-sql-cluster"

for v in "$from" "$to"; do
  "${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists v$v" \
    -c "create database v$v" >/dev/null
  "$pgflow" migrate --to "$v" --database "$base/v$v" >/dev/null
done

# The workload: prepare (committed), then one timed block; prints milliseconds per task (per
# run for `start`).
workload() {  # TEMPLATE KIND
  local db=$base/round kind=$2 flow="b_$RANDOM$RANDOM"
  "${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists round" \
    -c "create database round template $1" >/dev/null
  local start_fn=""
  case $kind in
    start) start_fn=start_flow ;;
    states) start_fn=start_flow_with_states ;;
    lean) start_fn=start_run ;;
  esac
  if [ "$kind" = repeat ]; then
    "${psql[@]}" "$db" <<SQL
select pgflow.create_flow('$flow', timeout => 60);
select pgflow.add_step('$flow', 'only');
select count(pgflow.start_run_idempotent('$flow', '{}', 'order-' || i)) from generate_series(1, $runs) i;
do \$\$
declare
  t0 timestamptz := clock_timestamp();
begin
  for i in 1..$runs loop
    perform pgflow.start_run_idempotent('$flow', '{}', 'order-' || i);
  end loop;
  raise notice '%', round((extract(epoch from clock_timestamp() - t0) * 1000 / $runs)::numeric, 4);
end \$\$;
SQL
    return
  elif [ -n "$start_fn" ]; then
    "${psql[@]}" "$db" <<SQL
select pgflow.create_flow('$flow', timeout => 60);
select pgflow.add_step('$flow', 'only');
do \$\$
declare
  t0 timestamptz := clock_timestamp();
begin
  for i in 1..$runs loop
    perform pgflow.$start_fn('$flow', '{}');
  end loop;
  raise notice '%', round((extract(epoch from clock_timestamp() - t0) * 1000 / $runs)::numeric, 4);
end \$\$;
SQL
    return
  elif [ "$kind" = single ]; then
    "${psql[@]}" "$db" >/dev/null <<SQL
select pgflow.create_flow('$flow', timeout => 60);
select pgflow.add_step('$flow', 'only');
select pgflow.start_flow('$flow', '{}') from generate_series(1, $runs);
SQL
  else
    "${psql[@]}" "$db" >/dev/null <<SQL
select pgflow.create_flow('$flow', timeout => 60);
select pgflow.add_step('$flow', 'fetch');
select pgflow.add_step('$flow', 'process', array['fetch'], step_type => 'map');
select pgflow.add_step('$flow', 'total', array['process']);
select pgflow.add_step('$flow', 'count', array['fetch']);
select pgflow.add_step('$flow', 'report', array['total', 'count']);
select pgflow.start_flow('$flow', '{}') from generate_series(1, $runs / 20);
SQL
  fi
  "${psql[@]}" "$db" <<SQL
insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
values ('00000000-0000-0000-0000-0000000000aa', lower('$flow'), 'bench', pgflow.worker_protocol())
on conflict (worker_id) do update set queue_name = excluded.queue_name;
do \$\$ begin  -- the worker's claim fence, as register_worker creates it (0030+)
  if to_regclass('pgflow.claim_fences') is not null then
    insert into pgflow.claim_fences (worker_id) values ('00000000-0000-0000-0000-0000000000aa')
    on conflict do nothing;
  end if;
end \$\$;
do \$\$
declare
  t0 timestamptz := clock_timestamp();
  n int := 0;
  c record;
  batched boolean := to_regprocedure('pgflow.complete_tasks(jsonb)') is not null;
  results jsonb;
  -- Claimed as that version's worker claims: with a claim id of its own per call (0014+).
  claim text := format('select * from pgflow.claim_tasks(%L, %L, array(select m.msg_id from pgmq.read(%L, 60, 10) m), %L%s) where outcome = ''claimed''',
    lower('$flow'), '$flow', lower('$flow'), '00000000-0000-0000-0000-0000000000aa',
    case when to_regprocedure('pgflow.claim_tasks(text, text, bigint[], uuid, text, uuid)') is not null
         then ', null, gen_random_uuid()' else '' end);
begin
  loop
    results := '[]';
    for c in execute claim loop
      results := results || jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
        'task_index', c.task_index,
        'output', case when c.step_slug = 'fetch' then (select jsonb_agg(i) from generate_series(1, 100) i)
                       else to_jsonb(c.task_index) end);
      n := n + 1;
    end loop;
    exit when results = '[]';
    -- Reported as that version's worker does: one batch call (0006+), else one call per result.
    if batched then
      perform pgflow.complete_tasks(results);
    else
      perform pgflow.complete_task((r->>'run_id')::uuid, r->>'step_slug', (r->>'task_index')::int, r->'output')
      from jsonb_array_elements(results) r
      order by r->>'run_id', r->>'step_slug', (r->>'task_index')::int;
    end if;
  end loop;
  raise notice '%', round((extract(epoch from clock_timestamp() - t0) * 1000 / greatest(n, 1))::numeric, 4);
end \$\$;
SQL
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b / a}'; }

echo "schema $from vs $to, $rounds rounds alternating, $runs runs per round (PostgreSQL default settings)"
for kind in $kinds; do
  : >"$cluster/$kind.$from"; : >"$cluster/$kind.$to"
  for r in $(seq 1 "$rounds"); do
    order="$from $to"
    [ $((r % 2)) = 0 ] && order="$to $from"
    for v in $order; do
      workload "v$v" "$kind" 2>&1 | sed -n 's/.*NOTICE:  //p' >>"$cluster/$kind.$v"
    done
  done
  fa=$(fastest <"$cluster/$kind.$from"); fb=$(fastest <"$cluster/$kind.$to")
  ma=$(median <"$cluster/$kind.$from"); mb=$(median <"$cluster/$kind.$to")
  printf '%-7s fastest: v%s %s  v%s %s ms/task  ratio %s   median: v%s %s  v%s %s  ratio %s\n' \
    "$kind" "$from" "$fa" "$to" "$fb" "$(ratio "$fa" "$fb")" "$from" "$ma" "$to" "$mb" "$(ratio "$ma" "$mb")"
done
