#!/usr/bin/env bash
# The test command: installs missing Debian packages, builds everything (library, CLI, tests,
# examples, benchmarks) in ./build, and runs the whole suite with ctest (unit, pgTAP, database
# integration, compile-fail and install tests) against a PostgreSQL cluster it starts itself.
# Extra arguments go to ctest (e.g. scripts/test.sh -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PGFLOW_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${PGFLOW_BUILD_TYPE:-Release} -DPGFLOW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
