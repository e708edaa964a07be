#!/usr/bin/env bash
# queue_churn.sh [--seconds S] [--rate R] [--workers W]
#
# What sustained churn leaves in a flow's PGMQ queue table, and whether it slows the worker's
# cycle. Every task's message is inserted (send), updated by the read, updated again by the
# claim and deleted by the archive: each update a new row version with new index entries (vt
# is indexed), so dead versions pile up until autovacuum reclaims them. On a throwaway cluster
# with default settings (autovacuum_naptime 1 min), for S seconds (default 180):
#   producers  pgbench, 2 connections starting runs of a one-step flow (pgflow.start_run), one
#              per transaction, at up to R runs/s in all (default 800; pgbench --rate);
#   worker     pgbench, W connections (default 2) each looping a worker's two transactions:
#              pgmq.read(10) + claim_tasks, then complete_tasks of what it claimed;
# and every 15 s the queue table's live and dead row versions, autovacuum runs, size and the
# queued tasks. Prints those samples, the producers' rate, and the worker's cycles per second
# and latency per 15 s window (pgbench --progress), then its statements' mean latencies. A
# worker that cannot keep up (W 1, R above what it drains) shows a growing backlog instead.
# Needs the pgflow program and pgbench (Debian's postgresql-15 package has it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow queue_churn
seconds=180; rate=800; workers=2
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
start_bench_cluster "$root/build/bench-churn-cluster"
work=$(mktemp -d)
trap '"$root/scripts/pgcluster" remove "$cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists churn" \
  -c "create database churn" >/dev/null
"$pgflow" migrate --database "$base/churn" >/dev/null
worker_id=00000000-0000-0000-0000-000000000001
"${psql[@]}" "$base/churn" >/dev/null <<SQL
select pgflow.create_flow('churn');
select pgflow.add_step('churn', 'only');
select pgflow.register_worker('$worker_id', 'churn-worker', 'churn', 'churn', pgflow.worker_protocol());
SQL
echo "select pgflow.start_run('churn', '{}');" > "$work/producer.sql"
# (pgbench -M extended passes :batch as a parameter, so the JSON needs no quoting.)
cat > "$work/worker.sql" <<SQL
select coalesce(jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug, 'task_index', c.task_index, 'output', 1)), '[]') as batch from pgflow.claim_tasks('churn', 'churn', array(select m.msg_id from pgmq.read('churn', 30, 10) m), '$worker_id', null, gen_random_uuid()) c where c.outcome = 'claimed' \gset
select count(*) from pgflow.complete_tasks(:batch::jsonb);
SQL
"$PG_BIN/pgbench" -n -M extended -f "$work/producer.sql" -c 2 -j 1 -R "$rate" -T "$seconds" \
  -P 15 "$base/churn" > "$work/producer.out" 2>&1 &
producer=$!
"$PG_BIN/pgbench" -n -M extended -f "$work/worker.sql" -c "$workers" -j 1 -T "$seconds" -P 15 -r \
  "$base/churn" > "$work/worker.out" 2>&1 &
worker=$!
for ((t = 15; t <= seconds; t += 15)); do
  sleep 15
  "${psql[@]}" -F' ' "$base/churn" -c "
    select $t, s.n_live_tup, s.n_dead_tup, s.autovacuum_count,
           pg_size_pretty(pg_total_relation_size('pgmq.q_churn')),
           (select count(*) from pgflow.step_tasks t where t.status = 'queued')
    from pg_stat_user_tables s where s.relname = 'q_churn'" || true
done > "$work/samples.out"
wait "$producer" "$worker"
echo "queue table pgmq.q_churn every 15 s: seconds, live and dead row versions, autovacuums, size, queued tasks"
sed 's/^/  /' "$work/samples.out"
echo "producers (target $rate runs/s):"
grep -E '^tps' "$work/producer.out" | sed 's/^/  /'
echo "worker ($workers connections; a cycle is a claim and a report):"
grep progress "$work/worker.out" | sed 's/^/  /'
grep -A3 'statement latencies' "$work/worker.out" | cut -c1-80 | sed 's/^/  /'
