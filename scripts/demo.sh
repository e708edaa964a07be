#!/usr/bin/env bash
# The demo command: installs missing Debian packages, builds pgflow, starts the embedded
# PostgreSQL cluster (build/demo-cluster; or uses $DATABASE_URL when set) and runs the
# quickstart example end to end: it installs the schema, starts a worker, starts two runs of a
# typed flow (a map step and a condition) with the client, and prints each run's output and
# per-step timings. Safe to run again: it reuses the cluster, the build and the compiled flow.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PGFLOW_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${PGFLOW_BUILD_TYPE:-Release} >/dev/null
cmake --build "$build" -j"$(nproc)" --target pgflow_cli pgflow_example_quickstart >/dev/null
if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$("$root/scripts/pgcluster" start "$build/demo-cluster")
  echo "embedded PostgreSQL: $DATABASE_URL"
fi
export DATABASE_URL
"$build/examples/quickstart"
"$build/src/pgflow" status
