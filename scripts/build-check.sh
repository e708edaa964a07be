#!/usr/bin/env bash
# Builds everything (library, CLI, tests, examples, benchmarks) in another build type, with
# warnings as errors, into ./build-<type>, and runs the unit tests there (no database; not the
# checks of the sources, formatting and thread-safety analysis, which scripts/test.sh runs).
# CI runs it for Debug next to scripts/test.sh (Release), so both build types stay green:
# optimisers warn differently. (Debug without debug information: see below.)
#
#   scripts/build-check.sh [Debug|Release|RelWithDebInfo]     (default Debug)
#
# With asan or tsan it is the sanitizer check instead (tests/README.md, "Sanitizers"): the
# library, the `pgflow` program, the test binaries and the test worker built RelWithDebInfo
# with warnings as errors and AddressSanitizer + UndefinedBehaviorSanitizer (./build-asan) or
# ThreadSanitizer (./build-tsan, over an Abseil built with it: tests/sanitizers/build-abseil.sh),
# then the unit and database tests (ctest labels unit and db) on a cluster of its own. Any
# sanitizer report, from a test or from a process a test started, fails the check; the reports
# are printed at the end. Extra arguments go to ctest (e.g. -R Worker).
#
#   scripts/build-check.sh asan|tsan [ctest arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
type=${1:-Debug}
build=$root/build-$(printf '%s' "$type" | tr '[:upper:]' '[:lower:]')
"$root/scripts/install-deps.sh"

case "$type" in
  asan|tsan) ;;
  *)
    # Debug is built without debug information (-g0 for CMake's -g): it changes no warning and
    # no code, and it costs time (a fifth of a test file's compile; linking more). For a build
    # to debug in, configure one with cmake directly.
    flags=()
    if [ "$type" = Debug ]; then flags+=(-DCMAKE_CXX_FLAGS_DEBUG=-g0); fi
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$type" -DPGFLOW_WERROR=ON \
      -DPGFLOW_REQUIRE_PROMETHEUS=ON "${flags[@]}" >/dev/null
    cmake --build "$build" -j"$(nproc)"
    cd "$build"
    # The checks of the sources themselves (formatting, thread-safety analysis) do not depend
    # on the build type: the Release pass (scripts/test.sh) runs them.
    ctest --output-on-failure -j"$(nproc)" -L unit -E '^unit\.(clang_format|thread_safety_analysis)$'
    exit 0
    ;;
esac

shift
sanitizers=$root/tests/sanitizers
cmake_args=()
if [ "$type" = asan ]; then
  sanitize=address,undefined
else
  sanitize=thread
  "$sanitizers/build-abseil.sh" "$build/abseil"
  cmake_args+=(-Dabsl_DIR="$build/abseil/lib/cmake/absl")
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPGFLOW_WERROR=ON \
  -DPGFLOW_SANITIZE="$sanitize" -DPGFLOW_BUILD_EXAMPLES=OFF -DPGFLOW_BUILD_BENCHMARKS=OFF \
  "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target pgflow pgflow_cli pgflow_test_worker \
  pgflow_unit_tests pgflow_db_tests pgflow_worker_tests

# Every sanitized process writes its ASan, LSan and TSan reports to $logs/report.<pid> rather
# than to stderr: a report from a process whose exit status or output a test does not look at
# (a worker child, a `pgflow` run expected to fail) still fails the check. g++'s ASan runtime
# prints UBSan's reports to stderr whatever log_path says, so the output of every test
# (ctest's LastTest.log, which has the stderr of the processes a test starts unless the test
# redirects it) is searched for them too.
logs=$build/sanitizer-reports
rm -rf "$logs"
mkdir -p "$logs"
common="halt_on_error=1:log_path=$logs/report"
export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="$common:print_stacktrace=1"
export TSAN_OPTIONS="$common:second_deadlock_stack=1"

# Left out: tests that run none of the sanitized code and only cost time here —
# unit.thread_safety_analysis (clang -fsyntax-only over src/, minutes of both cores), and the
# fault soak (label soak, its own program and cluster; not built here).
excluded='^unit\.thread_safety_analysis$'
cd "$build"
status=0
ctest --output-on-failure -j"$(nproc)" -L '^(unit|db)$' -LE '^soak$' -E "$excluded" "$@" || status=$?

reports=("$logs"/report.*)
found=0
if [ -e "${reports[0]}" ]; then
  for r in "${reports[@]}"; do
    echo "==== $r"
    cat "$r"
  done
  echo "$type: ${#reports[@]} process(es) wrote sanitizer reports (above, and in $logs)" >&2
  found=1
fi
marker='runtime error: |ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|WARNING: ThreadSanitizer'
if grep -Eq "$marker" Testing/Temporary/LastTest.log 2>/dev/null; then
  grep -En "$marker" Testing/Temporary/LastTest.log >&2
  echo "$type: sanitizer reports in the tests' output ($build/Testing/Temporary/LastTest.log)" >&2
  found=1
fi
[ "$found" -eq 0 ] || exit 1
if [ "$status" -ne 0 ]; then
  echo "$type: tests failed (no sanitizer report)" >&2
  exit "$status"
fi
echo "$type: unit and db tests passed with no sanitizer report"
