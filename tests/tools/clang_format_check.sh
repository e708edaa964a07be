#!/usr/bin/env bash
# clang_format_check.sh: every C++ file of the tree (include/, src/, tests/, bench/, examples/)
# is formatted as .clang-format says; lists the files that drift and fails. scripts/format.sh
# fixes them. Without clang-format the test fails (scripts/install-deps.sh installs it): a check
# that cannot run does not pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
format=${CLANG_FORMAT:-clang-format}
if ! command -v "$format" >/dev/null; then
  echo "FAIL: $format not found (scripts/install-deps.sh installs Debian's clang-format)" >&2
  exit 1
fi
cd "$root"
mapfile -t files < <(find include src tests bench examples -name '*.h' -o -name '*.cc' | sort)
# One clang-format for every file: a process per file cost minutes of CI on a busy machine.
if output=$("$format" --dry-run --Werror "${files[@]}" 2>&1); then
  echo "all ${#files[@]} C++ files follow .clang-format"
  exit 0
fi
mapfile -t drifted < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$output" | sort -u)
if [ "${#drifted[@]}" -eq 0 ]; then  # it failed for another reason: show it
  echo "FAIL: $format failed:" >&2
  printf '%s\n' "$output" >&2
  exit 1
fi
echo "FAIL: ${#drifted[@]} of ${#files[@]} files drift from .clang-format (scripts/format.sh fixes them):" >&2
printf '  %s\n' "${drifted[@]}" >&2
exit 1
