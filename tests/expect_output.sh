#!/usr/bin/env bash
# expect_output.sh EXIT PATTERN COMMAND [ARGS...]
#
# Runs COMMAND and passes only when it exits with EXIT (a number, or "nonzero") and its output
# (stdout and stderr) matches the extended regular expression PATTERN. ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit code.
set -uo pipefail
want=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
code=$?
if [ "$want" = nonzero ]; then
  [ "$code" -ne 0 ] || { printf 'expected a non-zero exit, got 0; output:\n%s\n' "$out"; exit 1; }
else
  [ "$code" -eq "$want" ] || { printf 'expected exit %s, got %s; output:\n%s\n' "$want" "$code" "$out"; exit 1; }
fi
grep -Eq -- "$pattern" <<<"$out" || { printf 'output does not match /%s/:\n%s\n' "$pattern" "$out"; exit 1; }
