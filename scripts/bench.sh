#!/usr/bin/env bash
# The benchmark command: installs missing Debian packages, builds the benchmarks in
# ./build-bench (RelWithDebInfo, like the test build) and runs the end-to-end load program,
# passing every argument through:
#
#   scripts/bench.sh                      # all sections, default sizes (a few minutes)
#   scripts/bench.sh --scale=0.2          # quicker; --help lists every flag
#   scripts/bench.sh micro [gbench args]  # the Google Benchmark micro-benchmarks instead
#
# pgflow_bench uses $DATABASE_URL when set; otherwise it creates a throwaway PostgreSQL
# cluster (default settings) under the build tree and removes it at the end. The SQL
# micro-benchmarks run only when DATABASE_URL is set. See bench/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PGFLOW_BENCH_BUILD_DIR:-$root/build-bench}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${PGFLOW_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j"$(nproc)" --target pgflow_bench pgflow_micro_bench >/dev/null
if [ "${1:-}" = "micro" ]; then
  shift
  exec "$build/bench/pgflow_micro_bench" "$@"
fi
exec "$build/bench/pgflow_bench" "$@"
