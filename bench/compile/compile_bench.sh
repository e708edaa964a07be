#!/usr/bin/env bash
# bench/compile/compile_bench.sh [--rounds N] [--before REV] [--cxx g++]
#
# Compile cost of pgflow's headers and DSL (issue #33): compiles fixed TUs (-std=c++20 -O2,
# one TU at a time, rounds alternating the TUs) and prints each TU's median wall time, its
# preprocessed size (non-blank lines), the ratios the targets name and a verdict for each:
#   producer (signature + client.h + one typed start) <= 1.5x client.h alone
#   client.h alone <= 0.5x its figure before (with --before REV: the same TU against REV's headers)
#   six-flow TU <= 3x the one-flow TU (examples/readme.cc); one-flow TU <= 1.5x the headers alone
# Also json.hpp alone and the Abseil + standard headers client.h includes (the floor of a client.h
# that declared JSON without defining it). Timings only inform: the rules CI enforces are tests (a producer links no handler code:
# unit.examples.producer_links_no_handler_code; a mismatched signature does not compile:
# compile_fail.signature_*).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=4 before="" cxx=${CXX:-g++}
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --cxx) cxx=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--before REV] [--cxx g++]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
cleanup() {
  if [[ -n $before ]]; then git -C "$root" worktree remove --force "$work/before" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# name:include-dir:source
tus=("json:$root/include:$here/json_only.cc"
     "deps:$root/include:$here/deps_only.cc"
     "client:$root/include:$here/client_only.cc"
     "headers:$root/include:$here/headers_only.cc"
     "producer:$root/include:$here/producer.cc"
     "one_flow:$root/include:$root/examples/readme.cc"
     "six_flows:$root/include:$here/six_flows.cc")
if [[ -n $before ]]; then
  git -C "$root" worktree add --detach "$work/before" "$before" >/dev/null 2>&1
  tus+=("client_before:$work/before/include:$here/client_only.cc"
        "headers_before:$work/before/include:$here/headers_only.cc")
fi

declare -A times lines
seconds_of() {  # include-dir source
  local t0 t1
  t0=$(date +%s%N)
  "$cxx" -std=c++20 -O2 -I"$1" -c "$2" -o "$work/tu.o"
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
for tu in "${tus[@]}"; do
  IFS=: read -r name inc src <<<"$tu"
  lines[$name]=$("$cxx" -std=c++20 -I"$inc" -E -P "$src" | grep -cv '^[[:space:]]*$')
done
for ((r = 0; r < rounds; r++)); do
  n=${#tus[@]}
  for ((i = 0; i < n; i++)); do
    # Each round starts at another TU, so no TU always runs first (a cold cache) or last.
    IFS=: read -r name inc src <<<"${tus[$(((i + r) % n))]}"
    times[$name]+="$(seconds_of "$inc" "$src") "
  done
  echo "round $((r + 1))/$rounds done" >&2
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A med
printf '%-15s %10s %22s\n' "TU" "median s" "preprocessed lines"
for tu in "${tus[@]}"; do
  IFS=: read -r name _ _ <<<"$tu"
  med[$name]=$(median "${times[$name]}")
  printf '%-15s %10.2f %22s\n' "$name" "${med[$name]}" "${lines[$name]}"
done
verdict() {  # what ratio target
  local met
  met=$(awk -v r="$2" -v t="$3" 'BEGIN { print (r <= t) ? 1 : 0 }')
  printf '%-60s %6.2fx (target <= %sx) [%s]\n' "$1" "$2" "$3" "$( ((met)) && echo MET || echo NOT MET)"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
verdict "producer TU / client.h alone" "$(ratio "${med[producer]}" "${med[client]}")" 1.5
if [[ -n $before ]]; then
  verdict "client.h alone / before ($before)" "$(ratio "${med[client]}" "${med[client_before]}")" 0.5
  printf '%-60s %6.2fx\n' "headers alone / before ($before)" "$(ratio "${med[headers]}" "${med[headers_before]}")"
fi
verdict "six-flow TU / one-flow TU" "$(ratio "${med[six_flows]}" "${med[one_flow]}")" 3
verdict "one-flow TU / headers alone" "$(ratio "${med[one_flow]}" "${med[headers]}")" 1.5
