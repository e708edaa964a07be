#!/usr/bin/env bash
# thread_safety_analysis.sh [-I DIR]...: clang's thread-safety analysis (-Wthread-safety) over
# the source files of src/ that name a lock (below). Shared state there is annotated
# (absl::Mutex, ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, ...), so reading or writing a
# guarded field without its mutex fails this test. Syntax only: nothing is built. Extra -I
# arguments (e.g. libpq's headers) are passed to clang. CLANGXX overrides the compiler; without
# clang++ the test fails (scripts/install-deps.sh installs it): a check that cannot run does not
# pass.
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

# Only the files the analysis can find something in: those whose text, or the text of a
# project header they include (transitively), names a mutex or a thread-safety annotation.
# Code cannot take an absl::Mutex without naming one (Mutex, MutexLock, ...) or calling a
# function declared in such a header, so the others (most of src/) are skipped.
marks='Mutex|absl/synchronization/|ABSL_[A-Z_]*(GUARDED|LOCK|REQUIRES|ACQUIRE|RELEASE|ASSERT)'
declare -A seen
names_locks() {  # FILE: 0 when FILE or a project header it includes names one
  local f=$1 h candidate
  [ -n "${seen[$f]:-}" ] && return 1
  seen[$f]=1
  grep -Eq "$marks" "$f" && return 0
  while read -r h; do
    for candidate in "$(dirname "$f")/$h" "src/$h" "include/$h"; do
      if [ -f "$candidate" ]; then
        names_locks "$candidate" && return 0
        break
      fi
    done
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$f")
  return 1
}
cd "$root"
files=()
all=0
while read -r f; do
  all=$((all + 1))
  seen=()
  if names_locks "$f"; then files+=("$f"); fi
done < <(find src -name '*.cc' | sort)
echo "checking ${#files[@]} of $all files (the others name no lock) with $($clang --version | head -n 1)"
# One clang per file, two at a time; each prints its own diagnostics.
if ! printf '%s\n' "${files[@]}" |
     xargs -P "${PGFLOW_TSA_JOBS:-2}" -I{} \
       sh -c '"$0" "$@" {} || { echo "FAIL: {}" >&2; exit 1; }' "$clang" "${flags[@]}"; then
  echo "thread-safety analysis failed (see the diagnostics above)" >&2
  exit 1
fi
echo "thread-safety analysis: ${#files[@]} files clean"
