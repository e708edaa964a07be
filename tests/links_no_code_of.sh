#!/usr/bin/env bash
# links_no_code_of.sh OBJECT PRODUCER WORKER
#
# Passes when PRODUCER links none of the functions OBJECT defines in namespace NAMESPACE
# (default: orders, the example flow's TU: its handlers and flow) and WORKER links at least one
# (the control: the check can see them). Used by ctest for the producer example: a producer
# that includes a flow's signature only must not carry the flow's handler code.
set -euo pipefail
object=$1 producer=$2 worker=$3 namespace=${NAMESPACE:-orders}

# Text symbols (global or local) the flow's TU defines in the namespace, weak ones excluded:
# those are template code any TU may share (nlohmann, std::function), not the flow's own.
own=$(nm -C --defined-only "$object" | awk '$2 == "T" || $2 == "t"' | cut -d' ' -f3- |
  grep -F "${namespace}::" | sort -u || true)
if [[ -z $own ]]; then
  echo "links_no_code_of: $object defines no function in ${namespace}::" >&2
  exit 1
fi
count_in() { nm -C "$1" | cut -d' ' -f3- | sort -u | comm -12 - <(echo "$own") | wc -l; }
in_worker=$(count_in "$worker")
in_producer=$(count_in "$producer")
echo "$(echo "$own" | wc -l) functions of ${namespace}:: in $(basename "$object"): $in_worker in $(basename "$worker"), $in_producer in $(basename "$producer")"
if ((in_worker == 0)); then
  echo "links_no_code_of: the worker links none of them either: the check sees nothing" >&2
  exit 1
fi
if ((in_producer > 0)); then
  echo "links_no_code_of: the producer links handler code:" >&2
  nm -C "$producer" | cut -d' ' -f3- | sort -u | comm -12 - <(echo "$own") >&2
  exit 1
fi
