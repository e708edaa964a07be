#!/usr/bin/env bash
# run-example.sh CLUSTER_DIR [--worker WORKER_BIN] PROGRAM [ARGS...]
#
# Runs an example program against a fresh database of the test cluster (DATABASE_URL points
# at it) and drops the database afterwards. With --worker, the database is a clone of the
# migrated test template and WORKER_BIN runs in the background while PROGRAM runs; it must then
# stop cleanly on SIGTERM (exit 0). Without --worker the database is empty (the program
# installs the schema itself).
set -euo pipefail
cluster=$1; shift
worker=""
if [ "${1:-}" = "--worker" ]; then worker=$2; shift 2; fi
url=$(cat "$cluster/url")
db="example_$$_$RANDOM"
template=template0
[ -n "$worker" ] && template=pgflow_test_template
psql "$url" -q -v ON_ERROR_STOP=1 -c "create database \"$db\" template \"$template\"" >/dev/null
export DATABASE_URL="${url%/*}/$db"
worker_pid=""
cleanup() {
  [ -n "$worker_pid" ] && kill -KILL "$worker_pid" 2>/dev/null || true
  psql "$url" -q -c "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [ -n "$worker" ]; then
  "$worker" &
  worker_pid=$!
  # Wait until the worker has registered (it compiles the flow first).
  for _ in $(seq 1 300); do
    if [ "$(psql "$DATABASE_URL" -Atc "select count(*) from pgflow.workers where stopped_at is null")" != 0 ]; then
      break
    fi
    kill -0 "$worker_pid" 2>/dev/null || { echo "run-example: the worker exited early" >&2; exit 1; }
    sleep 0.1
  done
fi

"$@"

if [ -n "$worker" ]; then
  kill -TERM "$worker_pid"
  status=0
  wait "$worker_pid" || status=$?
  worker_pid=""
  if [ "$status" -ne 0 ]; then echo "run-example: worker exited with $status after SIGTERM" >&2; exit 1; fi
  echo "worker stopped cleanly"
fi
