#!/usr/bin/env bash
# The demo command: installs missing Debian packages, builds pgflow, starts the embedded
# PostgreSQL cluster (build/demo-cluster, or $DATABASE_URL when set), installs the schema and
# shows what is there. Safe to run again: it reuses the cluster and the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PGFLOW_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${PGFLOW_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j"$(nproc)" --target pgflow_cli >/dev/null
if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$("$root/scripts/pgcluster" start "$build/demo-cluster")
  echo "embedded cluster: $DATABASE_URL"
fi
export DATABASE_URL
"$build/src/pgflow" migrate
"$build/src/pgflow" status
psql "$DATABASE_URL" -X -q -c "select queue_name, created_at from pgmq.list_queues()"
