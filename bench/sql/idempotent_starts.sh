#!/usr/bin/env bash
# idempotent_starts.sh [--rounds R] [--runs K]
#
# What an idempotency key costs a start (docs/flow-control.md, "Idempotent starts"): on one
# database of the newest schema, alternates R rounds (default 5) of K starts (default 2000) of a
# 1-step flow, each kind on a fresh copy:
#   lean    start_run (no key: what every start without a key costs)
#   keyed   start_run_idempotent with a new key per start (the key's row is written)
#   repeat  start_run_idempotent with keys that already have runs (a read; nothing is started)
# and prints the fastest and median server time per start and each kind's ratio to lean. Like
# compare_versions.sh, each round is one plpgsql block (no network): the CPU cost of the
# functions, plus the round's one commit (where a key's foreign key is checked) spread over its
# starts. Needs the pgflow program (scripts/test.sh or scripts/bench.sh builds it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow idempotent_starts
rounds=5; runs=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
start_bench_cluster "$root/build/bench-sql-cluster"
"${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists latest" \
  -c "create database latest" >/dev/null
"$pgflow" migrate --database "$base/latest" >/dev/null
"${psql[@]}" "$base/latest" >/dev/null <<SQL
select pgflow.create_flow('keyed', timeout => 60);
select pgflow.add_step('keyed', 'only');
SQL

workload() {  # KIND: prints milliseconds per start
  local db=$base/round call
  "${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists round" \
    -c "create database round template latest" >/dev/null
  case $1 in
    lean) call="perform pgflow.start_run('keyed', '{}')" ;;
    keyed) call="perform pgflow.start_run_idempotent('keyed', '{}', 'order-' || i)" ;;
    repeat)
      "${psql[@]}" "$db" -c "select pgflow.start_run_idempotent('keyed', '{}', 'order-' || i)
                             from generate_series(1, $runs) i" >/dev/null
      call="perform pgflow.start_run_idempotent('keyed', '{}', 'order-' || i)" ;;
  esac
  # The loop's time plus its commit's (where the key's deferred foreign key is checked), per
  # start.
  "${psql[@]}" "$db" 2>&1 <<SQL | awk -v runs="$runs" '
      /NOTICE:/ { sub(/.*NOTICE:  /, ""); loop = $0 }
      /^Time:/ { commit = $2 }
      END { printf "%.4f\n", (loop + commit) / runs }'
begin;
do \$\$
declare
  t0 timestamptz := clock_timestamp();
begin
  for i in 1..$runs loop
    $call;
  end loop;
  raise notice '%', round((extract(epoch from clock_timestamp() - t0) * 1000)::numeric, 3);
end \$\$;
\\timing on
commit;
SQL
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b / a}'; }

kinds=(lean keyed repeat)
for k in "${kinds[@]}"; do : >"$cluster/$k.ms"; done
for r in $(seq 1 "$rounds"); do
  # Rotate the order every round: the later runs of a round are not always the same kind.
  for j in 0 1 2; do
    k=${kinds[$(((j + r) % 3))]}
    workload "$k" >>"$cluster/$k.ms"
  done
done
echo "idempotent starts: $rounds rounds, $runs starts per kind and round (PostgreSQL default settings)"
lf=$(fastest <"$cluster/lean.ms"); lm=$(median <"$cluster/lean.ms")
for k in "${kinds[@]}"; do
  f=$(fastest <"$cluster/$k.ms"); m=$(median <"$cluster/$k.ms")
  printf '%-7s fastest %s ms/start (%sx lean)   median %s (%sx lean)\n' "$k" "$f" "$(ratio "$lf" "$f")" \
    "$m" "$(ratio "$lm" "$m")"
done
