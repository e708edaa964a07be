#!/usr/bin/env bash
# The test command: installs missing Debian packages, builds everything (library, CLI, tests,
# examples, benchmarks) in ./build, and runs the whole suite with ctest (unit, pgTAP, database
# integration, compile-fail and install tests) against a PostgreSQL cluster it starts itself.
#
# PGMQ modes: the suite runs with pgflow's bundled PGMQ layer; then, when the real PGMQ
# extension can be offered (scripts/pgmq-extension-pg: installed system-wide, or the vendored
# PGMQ 1.5.1 next to the checkout), the database-facing tests (labels db and sql) run again
# with the extension, except the tests of the bundled layer itself (label bundled_pgmq) and those
# whose subject does not depend on the mode (label pgmq_mode_independent).
# PGFLOW_TEST_PGMQ_MODES=bundled skips the second pass; PGFLOW_TEST_REQUIRE_EXTENSION=1 (CI)
# fails the command when the extension cannot be offered. The last lines say which modes ran.
# Extra arguments go to ctest in both passes (e.g. scripts/test.sh -R Worker).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PGFLOW_BUILD_DIR:-$root/build}
modes=${PGFLOW_TEST_PGMQ_MODES:-bundled extension}
# Tests at once: twice the cores by default, because the database tests mostly wait (on the
# server, on workers, on notifications) rather than compute. PGFLOW_TEST_JOBS overrides.
jobs=${PGFLOW_TEST_JOBS:-$(( $(nproc) * 2 ))}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${PGFLOW_BUILD_TYPE:-Release} -DPGFLOW_WERROR=ON \
  -DPGFLOW_REQUIRE_PROMETHEUS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "== built at $(date -u +%H:%M:%S)"
cd "$build"

summary=()
if [[ " $modes " == *" bundled "* ]]; then
  PGFLOW_TEST_PGMQ=bundled ctest --output-on-failure -j"$jobs" "$@"
  summary+=("PGMQ mode bundled: every test passed")
fi
if [[ " $modes " == *" extension "* ]]; then
  # Exit 1: no PGMQ extension can be offered here; anything else is a broken setup and fails.
  extension_rc=0
  extension_bin=$("$root/scripts/pgmq-extension-pg" "$build/pgmq-extension-pg") || extension_rc=$?
  if [ "$extension_rc" -gt 1 ]; then
    echo "test.sh: scripts/pgmq-extension-pg failed (exit $extension_rc)" >&2
    exit 1
  fi
  if [ "$extension_rc" -eq 0 ]; then
    echo "== PGMQ extension pass (PostgreSQL from $extension_bin) at $(date -u +%H:%M:%S) =="
    PG_BIN=$extension_bin PGFLOW_TEST_PGMQ=extension \
      ctest --output-on-failure -j"$jobs" -L '^(db|sql)$' -LE '^(bundled_pgmq|pgmq_mode_independent)$' "$@"
    summary+=("PGMQ mode extension: every db and sql test passed (bundled-layer and mode-independent tests excluded)")
  elif [ -n "${PGFLOW_TEST_REQUIRE_EXTENSION:-}" ]; then
    echo "test.sh: no PGMQ extension can be offered here, and PGFLOW_TEST_REQUIRE_EXTENSION is set (see scripts/pgmq-extension-pg)" >&2
    exit 1
  else
    summary+=("PGMQ mode extension: not run (no PGMQ extension here; see scripts/pgmq-extension-pg)")
  fi
fi
printf '%s\n' "${summary[@]}"
