#!/usr/bin/env bash
# compare_builds.sh BEFORE_BUILD AFTER_BUILD [--rounds N] [pgflow_bench flags...]
#
# Before/after of a change, as bench/README.md asks for one: runs BEFORE_BUILD/bench/pgflow_bench
# and AFTER_BUILD/bench/pgflow_bench (e.g. a worktree of the previous commit and this one, built
# alike) alternately, N rounds (default 6), each against its own database of ONE throwaway
# cluster with default settings, swapping which goes first every round (the second of a pair
# runs measurably slower or faster on a shared machine). Each build migrates its own database to
# its own schema. Then prints, per measurement: the medians of both, after/before per round
# (median and range), and server CPU per task as a multiple of the same run's raw PGMQ cycle
# (the best a* row), which drifts far less with the machine than throughput does.
#
#   bench/compare_builds.sh ../before/build build --rounds 8 --only=abc
#
# Raw outputs are kept in build/bench-compare/. Needs python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
before=$(cd "$1" && pwd)/bench/pgflow_bench
after=$(cd "$2" && pwd)/bench/pgflow_bench
shift 2
rounds=6
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
for b in "$before" "$after"; do [ -x "$b" ] || { echo "compare_builds: no $b" >&2; exit 2; }; done

out=$root/build/bench-compare
cluster=$out/cluster
mkdir -p "$out"
rm -f "$out"/round*.txt
url=$("$root/scripts/pgcluster" start "$cluster")
trap '"$root/scripts/pgcluster" remove "$cluster" >/dev/null 2>&1 || true' EXIT
base=${url%/*}
for db in before after; do
  psql -X -q "$url" -c "set client_min_messages = warning" -c "drop database if exists $db" -c "create database $db"
done

for ((r = 1; r <= rounds; r++)); do
  order=(before after)
  if ((r % 2 == 0)); then order=(after before); fi
  for which in "${order[@]}"; do
    bin=$before
    [ "$which" = after ] && bin=$after
    echo "round $r/$rounds: $which" >&2
    DATABASE_URL=$base/$which "$bin" "$@" > "$out/round${r}_$which.txt" 2> "$out/round${r}_$which.err"
  done
done

python3 - "$out" "$rounds" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def parse(path):
    rows, current = {}, None
    for line in open(path):
        m = re.match(r'^([a-z]\d+[a-z]*)\s+.*?\s(\d+(?:\.\d+)?) (tasks/s|runs/s|x|ms|handlers|tasks)\b', line)
        if m:
            current = m.group(1)
            rows[current] = {'value': float(m.group(2)), 'unit': m.group(3)}
            continue
        c = re.search(r'CPU per task: PostgreSQL (\d+) us', line)
        if c and current and 'cpu' not in rows[current]:
            rows[current]['cpu'] = float(c.group(1))
    raw = [r for k, r in rows.items() if k.startswith('a') and 'cpu' in r]
    best = max(raw, key=lambda r: r['value']) if raw else None
    for k, r in rows.items():
        if best and 'cpu' in r:
            r['cpu_x'] = r['cpu'] / best['cpu']
    return rows

runs = {(r, w): parse(f'{out}/round{r}_{w}.txt') for r in range(1, rounds + 1) for w in ('before', 'after')}
def order(k):  # l2 before l2b before l10
    m = re.match(r'([a-z])(\d+)([a-z]*)', k)
    return (m.group(1), int(m.group(2)), m.group(3))
ids = sorted({k for rows in runs.values() for k in rows}, key=order)
med = statistics.median
print(f'{rounds} rounds, alternating order; medians; after/before per round: median (range)')
print(f'{"id":4} {"before":>10} {"after":>10} {"unit":8} {"after/before":>22}   {"CPU/task x raw: before -> after":>32}   {"CPU us/task: before -> after":>28}')
for k in ids:
    pairs = [(runs[(r, 'before')].get(k), runs[(r, 'after')].get(k)) for r in range(1, rounds + 1)]
    pairs = [(b, a) for b, a in pairs if b and a]
    if not pairs:
        continue
    ratios = [a['value'] / b['value'] for b, a in pairs if b['value']]
    line = (f'{k:4} {med([b["value"] for b, _ in pairs]):10.1f} {med([a["value"] for _, a in pairs]):10.1f} '
            f'{pairs[0][0]["unit"]:8} ')
    # (A count that is 0 before, e.g. l4's, has no ratio.)
    line += f'{med(ratios):6.2f} ({min(ratios):.2f}-{max(ratios):.2f})' if ratios else f'{"-":>22}'
    cb = [b['cpu_x'] for b, _ in pairs if 'cpu_x' in b]
    ca = [a['cpu_x'] for _, a in pairs if 'cpu_x' in a]
    if cb and ca:
        line += f'   {med(cb):14.2f} -> {med(ca):.2f} ({med(ca) / med(cb):.2f})'
        line += f'   {med([b["cpu"] for b, _ in pairs if "cpu" in b]):14.0f} -> {med([a["cpu"] for _, a in pairs if "cpu" in a]):.0f}'
    print(line)
PY
