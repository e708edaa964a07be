#!/usr/bin/env bash
# held_backlog_reads.sh [--backlogs "1000 10000 50000"] [--reads N] [--rounds R]
#
# What a limited step's backlog of held tasks costs a worker's read (docs/flow-control.md, "What
# it costs, and how it works"): on a database of the previous schema version and one of the
# newest, a flow whose one step has a concurrency limit of 10 gets each backlog of held tasks
# (runs started, 10 admitted), then N reads (default 500) of 20 messages each — more than are
# admitted, as a worker asks for its free slots — with the worker's read (`pgmq.read`, visibility
# 0 so the admitted messages stay visible), in one plpgsql block per measurement (no network).
# R rounds (default 3), alternating which version goes first; prints the fastest microseconds per
# read for each version and backlog. Before 0022 held tasks waited with invisible messages that
# every such read walked past; since 0022 they have no message. Needs the pgflow program.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow held_backlog_reads
backlogs="1000 10000 50000"; reads=500; rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --backlogs) backlogs=$2; shift 2 ;;
    --reads) reads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
newest=$(ls "$root"/sql/migrations/*.sql | sed -E 's|.*/0*([0-9]+)_.*|\1|' | sort -n | tail -n 1)
start_bench_cluster "$root/build/bench-sql-cluster"
for v in previous newest; do
  "${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists $v" \
    -c "create database $v" >/dev/null
done
"$pgflow" migrate --database "$base/previous" --to $((newest - 1)) >/dev/null
"$pgflow" migrate --database "$base/newest" >/dev/null
for v in previous newest; do
  "${psql[@]}" "$base/$v" >/dev/null <<'SQL'
select pgflow.ensure_flow_compiled('capped', jsonb_build_object('steps', jsonb_build_array(jsonb_build_object(
         'slug', 'work', 'stepType', 'single', 'dependencies', '[]'::jsonb, 'whenUnmet', 'skip',
         'whenExhausted', 'fail', 'requiredInputPattern', '{"defined": false}'::jsonb,
         'forbiddenInputPattern', '{"defined": false}'::jsonb))),
       pgflow.worker_protocol(), 'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 10}}}');
SQL
done

declare -A best
have=0
for backlog in $backlogs; do
  for v in previous newest; do  # grow each database's backlog to this size, in one transaction
    "${psql[@]}" "$base/$v" >/dev/null \
      -c "select pgflow.start_run('capped', jsonb_build_object('n', i)) from generate_series($have + 1, $backlog) i" \
      -c "vacuum analyze"
  done
  have=$backlog
  for ((r = 1; r <= rounds; r++)); do
    order=(previous newest)
    if ((r % 2 == 0)); then order=(newest previous); fi
    for v in "${order[@]}"; do
      us=$("${psql[@]}" "$base/$v" 2>&1 <<SQL | sed -n 's/.*NOTICE: *//p'
do \$\$
declare t0 timestamptz := clock_timestamp();
begin
  for i in 1..$reads loop
    perform count(*) from pgmq.read('capped', 0, 20);
  end loop;
  raise notice '%', round(extract(epoch from clock_timestamp() - t0) * 1e6 / $reads, 1);
end \$\$;
SQL
      )
      key=$v/$backlog
      if [ -z "${best[$key]:-}" ] || awk "BEGIN {exit !($us < ${best[$key]})}"; then best[$key]=$us; fi
    done
  done
  held=$("${psql[@]}" "$base/newest" -c "select count(*) from pgflow.step_tasks where gate = 'held'")
  printf 'backlog %6s held: read of 20 (10 admitted) %8s us at %s, %8s us at %s (newest/previous %s)\n' \
    "$held" "${best[previous/$backlog]}" "$((newest - 1))" "${best[newest/$backlog]}" "$newest" \
    "$(awk "BEGIN {printf \"%.2f\", ${best[newest/$backlog]} / ${best[previous/$backlog]}}")"
done
