#!/usr/bin/env bash
# headers_compile_alone.sh COMPILER PREFIX: every public header installed under PREFIX/include
# compiles in a translation unit of its own (it includes what it uses), with the installed
# include directory and the system's (Abseil, nlohmann/json, prometheus-cpp) only.
set -euo pipefail
compiler=$1
include=$2/include
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
count=0
while IFS= read -r header; do
  name=${header#"$include"/}
  printf '#include "%s"\n' "$name" > "$work/tu.cc"
  if ! "$compiler" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$include" "$work/tu.cc" \
       2> "$work/errors"; then
    echo "FAIL: $name does not compile alone:" >&2
    head -20 "$work/errors" >&2
    failed=1
  fi
  count=$((count + 1))
done < <(find "$include/pgflow" -name '*.h' | sort)
[ "$count" -gt 0 ] || { echo "no headers under $include/pgflow" >&2; exit 1; }
echo "$count installed headers compiled alone"
exit "$failed"
