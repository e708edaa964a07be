#!/usr/bin/env bash
# Builds everything (library, CLI, tests, examples, benchmarks) in another build type, with
# warnings as errors, into ./build-<type>, and runs the unit tests there (no database).
# CI runs it for Debug next to scripts/test.sh (Release), so both build types stay green:
# optimisers warn differently.
#
#   scripts/build-check.sh [Debug|Release|RelWithDebInfo]     (default Debug)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
type=${1:-Debug}
build=$root/build-$(printf '%s' "$type" | tr '[:upper:]' '[:lower:]')
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$type" -DPGFLOW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)" -L unit
