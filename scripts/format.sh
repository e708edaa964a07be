#!/usr/bin/env bash
# Formats every C++ file of the tree (include/, src/, tests/, bench/, examples/) in place as
# .clang-format says. ctest's unit.clang_format fails when a file drifts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cd "$root"
find include src tests bench examples -name '*.h' -o -name '*.cc' | sort | xargs clang-format -i
