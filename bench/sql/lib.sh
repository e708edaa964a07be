# Shared by the SQL-only bench scripts (sourced after `root` is set): the pgflow program, a
# throwaway cluster removed on exit, and the statistics they print.

# The pgflow program (for `pgflow migrate`): $PGFLOW_BIN, else the test or bench build's.
find_pgflow() {  # NAME (of the calling script, for its error)
  pgflow=${PGFLOW_BIN:-$root/build/src/pgflow}
  [ -x "$pgflow" ] || pgflow=$root/build-bench/src/pgflow
  [ -x "$pgflow" ] || { echo "$1: build the pgflow program first (scripts/test.sh)" >&2; exit 2; }
}

# Starts the throwaway cluster `cluster` (default settings), removed when the script exits; sets
# url (its maintenance database), base (url without the database) and psql (the client, quiet).
start_bench_cluster() {  # DIR
  cluster=$1
  url=$("$root/scripts/pgcluster" start "$cluster")
  trap '"$root/scripts/pgcluster" remove "$cluster" >/dev/null 2>&1 || true' EXIT
  psql=("$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1)
  base=${url%/*}
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
fastest() { sort -n | head -n 1; }
