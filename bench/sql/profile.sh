#!/usr/bin/env bash
# profile.sh [--starts N] [--schema VERSION] [--out DIR]
#
# Where the server's CPU goes, per hot entry point, against the raw PGMQ calls the same work
# needs. On a throwaway cluster with default settings (fsync on), migrated to the newest schema
# with the bundled PGMQ, pgbench drives one entry point at a time from one client, each call in
# its own transaction as a worker or producer makes it, while `perf record -a` samples the
# machine (DWARF call graphs: Debian's PostgreSQL has no frame pointers):
#
#   raw_send      pgmq.send of one message                 start      pgflow.start_flow, 1-step flow
#   raw_read      pgmq.read of 10 + pgmq.set_vt of each    claim      the worker's read + claim_tasks of 10
#   raw_archive   pgmq.archive of 10                       complete   pgflow.complete_tasks of 10
#
# Each sample of a PostgreSQL backend is charged to the innermost frame of its call chain that
# names a kind of work (planning, parsing, executor start/end, CHECK constraints, index entries,
# WAL, the commit's flush, locks, PL/pgSQL, GUC save/restore of a function's SET clause, JSON,
# the executor), so the kinds add up to 100% of the backend's CPU. Prints, per entry point, its
# server CPU per call from the samples and that split, then (from a second, shorter pass with
# pg_stat_statements) its costliest statements, including those inside functions, with how often
# each was planned; raw files stay in DIR for `perf report`.
# Needs perf (Debian: linux-perf) and root (or perf_event_paranoid <= 0) and the pgflow program.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
pgflow=${PGFLOW_BIN:-$root/build/src/pgflow}
[ -x "$pgflow" ] || { echo "profile: build the pgflow program first (scripts/test.sh)" >&2; exit 2; }
command -v perf >/dev/null || { echo "profile: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
starts=6000; out=$root/build/bench-profile; schema=
while [ $# -gt 0 ]; do
  case "$1" in
    --starts) starts=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --schema) schema=$2; shift 2 ;;  # migrate only up to this version (default: the newest)
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
claims=$((starts / 10))
mkdir -p "$out"
cluster=$root/build/bench-profile-cluster
url=$("$root/scripts/pgcluster" start "$cluster")
trap '"$root/scripts/pgcluster" remove "$cluster" >/dev/null 2>&1 || true' EXIT
psql=("$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$url")
"$pgflow" migrate ${schema:+--to "$schema"} --database "$url" >/dev/null
worker=00000000-0000-0000-0000-0000000000aa
"${psql[@]}" >/dev/null <<SQL
select pgflow.create_flow('prof', timeout => 60);
select pgflow.add_step('prof', 'only');
select pgmq.create('prof_raw');
select pgflow.register_worker('$worker', 'profile', 'prof', 'prof', pgflow.worker_protocol());
create sequence prof_batch;
SQL

script() { printf '%s\n' "$2" >"$out/$1.sql"; }
script raw_send "select pgmq.send('prof_raw', '{\"run_id\":\"0190f0a0-0000-7000-8000-000000000000\",\"step_slug\":\"only\",\"task_index\":0,\"flow_slug\":\"prof\"}');"
script start "select pgflow.start_flow('prof', '{}');"
script raw_read "select count(*) from pgmq.read('prof_raw', 60, 10) m cross join lateral pgmq.set_vt('prof_raw', m.msg_id, 62) v;"
script claim "select count(*) from pgflow.claim_tasks('prof', 'prof', array(select m.msg_id from pgmq.read('prof', 60, 10) m), '$worker', null, gen_random_uuid()) c;"
script raw_archive "select nextval('prof_batch') as b \\gset
select count(*) from pgmq.archive('prof_raw', (select ids from prof_raw_batches where b = :b));"
script complete "select nextval('prof_batch') as b \\gset
select count(*) from pgflow.complete_tasks((select results from prof_batches where b = :b));"

# profile NAME TRANSACTIONS: runs NAME.sql under perf; writes NAME.data and NAME.calls.
profile() {
  local name=$1 n=$2
  perf record -q -a -e cpu-clock --call-graph dwarf,16384 -F 499 -o "$out/$name.data" -- \
    "$PG_BIN/pgbench" -n -c 1 -t "$n" -f "$out/$name.sql" "$url" >"$out/$name.pgbench" 2>&1
  echo "$n" >"$out/$name.calls"
}

profile raw_send "$starts"
profile start "$starts"
profile raw_read "$claims"
profile claim "$claims"
# The raw messages, 10 a batch, in prof_raw_batches (numbered from 1).
"${psql[@]}" >/dev/null <<SQL
create table prof_raw_batches as
  select b, array_agg(msg_id order by msg_id) ids
  from (select (row_number() over (order by msg_id) - 1) / 10 + 1 as b, msg_id from pgmq.q_prof_raw) m
  group by b;
SQL
# complete_batches: the started tasks, 10 a batch, in prof_batches (numbered from 1).
complete_batches() {
  "${psql[@]}" >/dev/null <<SQL
set client_min_messages = warning;
drop table if exists prof_batches;
create table prof_batches as
  select b, jsonb_agg(jsonb_build_object('run_id', run_id, 'step_slug', step_slug,
                                         'task_index', task_index, 'output', 1)) results
  from (select (row_number() over (order by run_id) - 1) / 10 + 1 as b, run_id, step_slug, task_index
        from pgflow.step_tasks where status = 'started') t
  group by b;
select setval('prof_batch', 1, false);
SQL
}
complete_batches  # (also rewinds prof_batch)
profile raw_archive "$claims"
"${psql[@]}" -c "select setval('prof_batch', 1, false)" >/dev/null
profile complete "$claims"

# Which statements: the same entry points again (a fifth of the calls) with pg_stat_statements
# (track = all: statements inside functions too; track_planning: which are planned per call).
"${psql[@]}" -c "alter system set shared_preload_libraries = 'pg_stat_statements'" >/dev/null
"$root/scripts/pgcluster" stop "$cluster" >/dev/null
url=$("$root/scripts/pgcluster" start "$cluster")
psql=("$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$url")
"${psql[@]}" >/dev/null <<SQL
create extension pg_stat_statements;
alter system set pg_stat_statements.track = 'all';
alter system set pg_stat_statements.track_planning = on;
select pg_reload_conf();
SQL
statements() {  # NAME TRANSACTIONS: the statements of NAME.sql, by total time, into NAME.statements
  "${psql[@]}" -c "select pg_stat_statements_reset()" >/dev/null
  "$PG_BIN/pgbench" -n -c 1 -t "$2" -f "$out/$1.sql" "$url" >/dev/null 2>&1
  "$PG_BIN/psql" -X -q -A -F ' | ' "$url" >"$out/$1.statements" <<SQL
select calls, plans, round((total_exec_time / calls * 1000)::numeric) as exec_us,
       round((total_plan_time / greatest(plans, 1) * 1000)::numeric) as plan_us,
       left(regexp_replace(query, '\s+', ' ', 'g'), 90) as statement
from pg_stat_statements
where calls >= $2 and query not like '%pg_stat_statements%' and query not like '%nextval(%'
order by total_exec_time + total_plan_time desc limit 12
SQL
}
statements start $((starts / 5))
statements claim $((claims / 5))
complete_batches
statements complete $((claims / 5))

# The split: innermost frame of a known kind wins (the first matching line of a sample's chain,
# which perf script prints leaf first).
split() {
  perf script -i "$out/$1.data" --comm postgres -F comm,ip,sym,dso 2>/dev/null | awk '
    function kind(s, d) {
      if (d ~ /plpgsql\.so/) return "PL/pgSQL";
      if (s ~ /^(do_fsync|ext4_sync_file|__x64_sys_fdatasync|issue_xlog_fsync)$/) return "commit flush";
      if (s ~ /^(XLogInsert|XLogInsertRecord|XLogFlush|XLogWrite|XLogBeginInsert|XLogRegister)/) return "WAL";
      if (s ~ /^(tcp_|sock_|__sys_sendto|__sys_recvfrom|secure_read|secure_write|pq_)/) return "client I/O";
      if (s ~ /^(standard_planner|planner|pg_plan_query|pg_plan_queries|BuildCachedPlan|subquery_planner)$/) return "planning";
      if (s ~ /^(raw_parser|base_yyparse|parse_analyze|pg_analyze_and_rewrite|pg_parse_query|stringToNode|RevalidateCachedQuery|transformStmt|transformTopLevelStmt)/) return "parsing";
      if (s ~ /^(ExecConstraints|ExecRelCheck|ExecCheck)/) return "CHECK constraints";
      if (s ~ /^(ExecInsertIndexTuples|index_insert|btinsert|_bt_doinsert)/) return "index entries";
      if (s ~ /^(standard_ExecutorStart|ExecInitNode|InitPlan|ExecutorStart|standard_ExecutorEnd|ExecEndNode|ExecutorEnd|ExecCloseIndices|ExecOpenIndices)$/) return "executor start/end";
      if (s ~ /^(LockAcquire|LockAcquireExtended|LockRelease|LockRelationOid|heap_lock_tuple|XactLockTableWait|LockTuple)/) return "locks";
      if (s ~ /^(set_config_option|NewGUCNestLevel|AtEOXact_GUC|ProcessGUCArray|fmgr_security_definer)$/) return "function SET / security definer";
      if (s ~ /^(jsonb_|JsonbValue|pushJsonbValue|convertJsonb|JsonbDeepContains|to_jsonb|json_|datum_to_jsonb|parse_json|pg_parse_json|JsonbToCString|findJsonbValue|getKeyJsonValueFromContainer)/) return "JSON";
      if (s ~ /^(standard_ExecutorRun|ExecutorRun|ExecScan|ExecProcNode|ExecModifyTable|ExecUpdate|ExecInsert|ExecDelete|ExecAgg|ExecSort|ExecutePlan|ExecNestLoop|ExecHashJoin|ExecIndexScan|ExecSeqScan|ExecResult|ExecMakeTableFunctionResult|ExecMakeFunctionResultSet|ExecInterpExpr|ExecEvalExpr)/) return "executor";
      if (s ~ /^(CommitTransaction|CommitTransactionCommand|StartTransaction|AbortTransaction|RecordTransactionCommit|AtEOXact_|PreCommit_)/) return "transaction start/end";
      if (s ~ /^(fmgr_sql|init_sql_fcache|postquel_)/) return "SQL functions";
      return "";
    }
    /^postgres/ { if (n) settle(); n = 0; next }
    /^\t/ { n++; sym[n] = $2; dso[n] = $NF; next }
    function settle(   i, k, found, proc) {
      found = ""; proc = "background"
      for (i = 1; i <= n; i++) if (sym[i] == "PostgresMain") proc = "backend"
      if (proc == "background") { found = "background processes (WAL writer, checkpointer, ...)" }
      else for (i = 1; i <= n && found == ""; i++) found = kind(sym[i], dso[i])
      by[found == "" ? "other" : found]++; total++
      n = 0
    }
    END {
      if (n) settle();
      for (k in by) printf "%s\t%.1f\n", k, 100 * by[k] / total;
      printf "TOTAL\t%d\n", total  # samples, each 1/499 s of one CPU
    }' | sort -t"$(printf '\t')" -k2 -n -r
}

printf '%s\n' "profile: schema $("${psql[@]}" -c "select max(version) from pgflow.schema_migrations" 2>/dev/null || echo '?'), bundled PGMQ, one client, fsync on"
declare -A cpu
for name in raw_send start raw_read claim raw_archive complete; do
  split "$name" >"$out/$name.split"
  calls=$(cat "$out/$name.calls")
  elapsed=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out/$name.pgbench")
  samples=$(awk -F'\t' '$1 == "TOTAL" {print $2}' "$out/$name.split")
  cpu[$name]=$(awk -v s="$samples" -v n="$calls" 'BEGIN {printf "%.3f", s / 499 * 1000 / n}')
  printf '\n%s: %s calls, latency %s ms, server CPU %s ms per call\n' "$name" "$calls" "$elapsed" "${cpu[$name]}"
  awk -F'\t' '$1 != "TOTAL" {printf "  %-34s %5.1f%%\n", $1, $2}' "$out/$name.split"
  if [ -f "$out/$name.statements" ]; then
    printf '  statements (pg_stat_statements; µs per call, nested ones included in their caller):\n'
    sed 's/^/    /' "$out/$name.statements"
  fi
done
awk -v s="${cpu[start]}" -v rs="${cpu[raw_send]}" -v c="${cpu[claim]}" -v rr="${cpu[raw_read]}" \
    -v k="${cpu[complete]}" -v ra="${cpu[raw_archive]}" 'BEGIN {
  printf "\nserver CPU per call over its raw counterpart: start %.2fx a send; claim of 10 %.2fx a read of 10 + set_vt of each; completion of 10 %.2fx an archive of 10\n", s / rs, c / rr, k / ra }'
