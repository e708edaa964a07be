#!/usr/bin/env bash
# The README's first C++ block and examples/readme.cc (which the build compiles) are the same
# code, so the example users copy is known to compile.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
block=$(awk '/^```cpp$/ && !done {inside=1; next} inside && /^```$/ {inside=0; done=1} inside' "$root/README.md")
example=$(tail -n +2 "$root/examples/readme.cc")  # after its one comment line
if [ "$block" != "$example" ]; then
  echo "README.md's example and examples/readme.cc differ:" >&2
  diff <(printf '%s\n' "$block") <(printf '%s\n' "$example") >&2 || true
  exit 1
fi
echo "README example matches examples/readme.cc"
