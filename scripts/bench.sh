#!/usr/bin/env bash
# The benchmark command: installs missing Debian packages, builds the benchmarks in
# ./build-bench (RelWithDebInfo: optimised, with symbols for perf) and runs the end-to-end load program,
# passing every argument through:
#
#   scripts/bench.sh                      # all sections, default sizes (a few minutes)
#   scripts/bench.sh --scale=0.2          # quicker; --help lists every flag
#   scripts/bench.sh micro [gbench args]  # the Google Benchmark micro-benchmarks instead
#   scripts/bench.sh --pgmq-extension=DIR [args]
#                     # twice: with the bundled PGMQ layer, then with the real PGMQ extension
#                     # whose pgmq.control and pgmq--*.sql are in DIR (served by a private copy of
#                     # the PostgreSQL installation, scripts/pgmq-extension-pg: nothing is
#                     # installed into the system)
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

# --pgmq-extension=DIR: both PGMQ modes, one run each.
extension_dir=
args=()
for a in "$@"; do
  case "$a" in
    --pgmq-extension=*) extension_dir=${a#--pgmq-extension=} ;;
    *) args+=("$a") ;;
  esac
done
if [ -z "$extension_dir" ]; then
  exec "$build/bench/pgflow_bench" "$@"
fi
sharedir=$(/usr/lib/postgresql/15/bin/pg_config --sharedir)/extension
[ -f "$extension_dir/pgmq.control" ] || { echo "bench.sh: no pgmq.control in $extension_dir" >&2; exit 2; }
if [ -f "$sharedir/pgmq.control" ]; then
  echo "bench.sh: PostgreSQL already offers a pgmq extension; run without --pgmq-extension" >&2
  exit 2
fi
echo "== PGMQ: bundled layer =="
"$build/bench/pgflow_bench" "${args[@]}"
# The second run's cluster is started from a private copy of the PostgreSQL installation that
# offers the extension (scripts/pgmq-extension-pg): nothing is installed into the system.
extension_bin=$(PGFLOW_PGMQ_VENDOR=$extension_dir "$root/scripts/pgmq-extension-pg" "$build/pgmq-extension-pg") ||
  { echo "bench.sh: $extension_dir does not hold PGMQ 1.5.1 (pgmq.control, pgmq--1.5.1.sql)" >&2; exit 2; }
echo "== PGMQ: extension from $extension_dir =="
PG_BIN=$extension_bin "$build/bench/pgflow_bench" "${args[@]}"
