#!/usr/bin/env bash
# thread_safety_analysis.sh [-I DIR]...: clang's thread-safety analysis (-Wthread-safety) over
# every source file of src/. Shared state there is annotated (absl::Mutex, ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...), so reading or writing a guarded field without its mutex
# fails this test. Syntax only: nothing is built. Extra -I arguments (e.g. libpq's headers)
# are passed to clang. CLANGXX overrides the compiler; without clang++ the test fails
# (scripts/install-deps.sh installs it): a check that cannot run does not pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
clang=${CLANGXX:-clang++}
if ! command -v "$clang" >/dev/null; then
  echo "FAIL: $clang not found (scripts/install-deps.sh installs Debian's clang)" >&2
  exit 1
fi
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Werror=thread-safety
       -I"$root/include" -I"$root/src" "$@")

# The analysis must be live: a guarded field written without its mutex is an error. (Were the
# annotations to expand to nothing, every file below would pass unchecked.)
control=$("$clang" "${flags[@]}" -x c++ - 2>&1 <<'EOF' || true
#include "absl/synchronization/mutex.h"
class Counter {
 public:
  void add() { ++n_; }  // no lock
 private:
  absl::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};
EOF
)
if ! grep -q "error: writing variable 'n_' requires holding mutex 'mu_'" <<<"$control"; then
  echo "FAIL: $clang does not report an unguarded write: thread-safety analysis is not active" >&2
  printf '%s\n' "$control" >&2
  exit 1
fi

mapfile -t files < <(cd "$root" && find src -name '*.cc' | sort)
echo "checking ${#files[@]} files with $($clang --version | head -n 1)"
# One clang per file, two at a time; each prints its own diagnostics.
if ! printf '%s\n' "${files[@]}" |
     (cd "$root" && xargs -P "${PGFLOW_TSA_JOBS:-2}" -I{} \
        sh -c '"$0" "$@" {} || { echo "FAIL: {}" >&2; exit 1; }' "$clang" "${flags[@]}"); then
  echo "thread-safety analysis failed (see the diagnostics above)" >&2
  exit 1
fi
echo "thread-safety analysis: ${#files[@]} files clean"
