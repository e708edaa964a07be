#!/usr/bin/env bash
# pgcluster_test.sh: where scripts/pgcluster keeps a cluster's data. A new --fast (test)
# cluster lives in memory (/dev/shm) when that is a tmpfs with room; PGFLOW_CLUSTER_TMPFS=0, a
# cluster started without --fast, and a cluster that already has data on disk stay in DIR; a
# restart keeps the data where it is; a new DIR where a deleted one was gets a new cluster;
# `remove` deletes it wherever it is. Runs as ctest
# db.pgcluster_data_location (its own clusters, none of the suite's).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pgcluster=$root/scripts/pgcluster
work=$(mktemp -d /tmp/pgflow-pgcluster-test.XXXXXX)
chmod 755 "$work"
cleanup() {
  for d in "$work"/*/; do "$pgcluster" remove "$d" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# data_of DIR: the folder that holds DIR's data/ (DIR itself or its "location").
data_of() { if [ -f "$1/location" ]; then cat "$1/location"; else echo "$1"; fi; }
query() { psql "$("$pgcluster" url "$1")" -X -At -c "$2"; }

free_mb=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ] || [ "${free_mb:-0}" -lt 4096 ]; then
  # Not a machine this test can check the memory case on; CI's machines have a large /dev/shm.
  fail "/dev/shm is not a tmpfs with 4 GB free (${free_mb:-?} MB): the in-memory case cannot be checked here"
fi

# A new test cluster: in memory, and it works.
"$pgcluster" start "$work/fast" --fast >/dev/null
home=$(data_of "$work/fast")
case $home in /dev/shm/pgflow-cluster-*) ;; *) fail "a new --fast cluster is not in /dev/shm: $home" ;; esac
[ -f "$home/data/PG_VERSION" ] || fail "no data in $home"
[ ! -e "$work/fast/data" ] || fail "a --fast cluster in memory also has data in its DIR"
[ "$(query "$work/fast" "show fsync")" = off ] || fail "the --fast cluster does not run with fsync off"
query "$work/fast" "create table kept (x int); insert into kept values (7)" >/dev/null

# Stopped and started again, it keeps its data where it was.
"$pgcluster" stop "$work/fast"
"$pgcluster" start "$work/fast" --fast >/dev/null
[ "$(data_of "$work/fast")" = "$home" ] || fail "a restart moved the cluster from $home"
[ "$(query "$work/fast" "select x from kept")" = 7 ] || fail "a restart lost the cluster's data"

# A DIR deleted without `remove` (its server still running) leaves its cluster behind: a new
# DIR of the same path gets a new cluster, not the old one's data.
rm -rf "$work/fast"
"$pgcluster" start "$work/fast" --fast >/dev/null
[ "$(data_of "$work/fast")" = "$home" ] || fail "a new DIR of the same path is not in $home"
[ "$(query "$work/fast" "select count(*) from pg_tables where tablename = 'kept'")" = 0 ] ||
  fail "a new DIR got the data of the deleted DIR's cluster"

# remove deletes the memory copy too.
"$pgcluster" remove "$work/fast"
[ ! -e "$home" ] || fail "remove left $home"
[ ! -e "$work/fast/location" ] || fail "remove left the location file"

# Opted out, or not a test cluster: on disk, in DIR.
PGFLOW_CLUSTER_TMPFS=0 "$pgcluster" start "$work/opted_out" --fast >/dev/null
[ "$(data_of "$work/opted_out")" = "$work/opted_out" ] || fail "PGFLOW_CLUSTER_TMPFS=0 did not keep the cluster in DIR"
[ -f "$work/opted_out/data/PG_VERSION" ] || fail "no data in $work/opted_out"
"$pgcluster" stop "$work/opted_out"
# ... and a cluster that already has data on disk stays there, even started with --fast.
"$pgcluster" start "$work/opted_out" --fast >/dev/null
[ "$(data_of "$work/opted_out")" = "$work/opted_out" ] || fail "a --fast start moved an existing cluster into memory"
"$pgcluster" remove "$work/opted_out"

"$pgcluster" start "$work/demo" >/dev/null
[ "$(data_of "$work/demo")" = "$work/demo" ] || fail "a cluster started without --fast is not in DIR"
"$pgcluster" remove "$work/demo"
echo "pgcluster: test clusters in memory, the others on disk, remove deletes both"
