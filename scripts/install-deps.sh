#!/usr/bin/env bash
# Installs, from Debian 12 packages, everything pgflow needs to build, test and run
# its demo. Idempotent and non-interactive: packages already present are skipped,
# so a second run makes no changes and needs no network.
set -euo pipefail

packages=(
  g++ cmake make pkg-config git ca-certificates
  clang  # thread-safety analysis (tests/tools/thread_safety_analysis.sh)
  clang-format  # the C++ style (.clang-format; tests/tools/clang_format_check.sh)
  libpq-dev libabsl-dev nlohmann-json3-dev
  libcli11-dev        # the `pgflow` command line's argument parser (header-only)
  prometheus-cpp-dev  # the optional pgflow::prometheus component (built and tested when present)
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  postgresql-15 postgresql-contrib postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
  pgbouncer  # the transaction pooler the fleet tests run through (scripts/pgpooler)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
