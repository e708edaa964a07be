#!/usr/bin/env bash
# sql_schema_test.sh CLUSTER_DIR: tests scripts/sql-schema (check and next-migration) against
# copies of sql/schema and sql/migrations with deliberate changes, on a running test cluster.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=$root/scripts/sql-schema
cluster=$1
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# fresh_copy NAME: copies of the schema and migrations in $tmp/NAME/{schema,migrations}
fresh_copy() {
  rm -rf "$tmp/$1"; mkdir -p "$tmp/$1"
  cp -r "$root/sql/schema" "$tmp/$1/schema"
  cp -r "$root/sql/migrations" "$tmp/$1/migrations"
}
run() {  # NAME COMMAND: runs the tool on copy NAME; output in $out, status in $status
  local name=$1; shift
  out=$("$tool" "$@" --cluster "$cluster" --schema "$tmp/$name/schema" --migrations "$tmp/$name/migrations" 2>&1)
  status=$?
}
contains() { grep -qF -- "$2" <<<"$1"; }

# 1. The tree as it is: the check passes and no function needs a migration.
fresh_copy same
run same check
[ $status = 0 ] && contains "$out" "agrees" && pass "the tree agrees" || fail "the tree: $out"
run same next-migration
[ $status = 0 ] && contains "$out" "No function differs." && pass "nothing to generate for the tree" \
  || fail "next-migration on the tree: $out"

# 2. A function edited in the schema: the check names it; the draft is exactly its file, and
#    applying the draft as the next migration makes the check pass.
fresh_copy edited
file=functions/workers/worker_heartbeat.sql
sed -i 's/returning w.deprecated_at is not null/returning w.deprecated_at is not null and true/' "$tmp/edited/schema/$file"
run edited check
[ $status = 1 ] && contains "$out" "changed: worker_heartbeat(uuid); Type: FUNCTION" \
  && pass "check names an edited function" || fail "check of an edited function: $out"
run edited next-migration
draft=$out
if [ $status = 0 ] && contains "$draft" "-- ---- sql/schema/$file" &&
   [ "$(grep -c '^-- ---- sql/schema/' <<<"$draft")" = 1 ] && ! contains "$draft" "drop function"; then
  pass "the draft holds exactly the edited function's file"
else
  fail "draft for an edited function: $draft"
fi
last=$(ls "$tmp/edited/migrations" | tail -n 1); next=$(printf '%04d' $((10#${last%%_*} + 1)))
printf '%s\n' "$draft" >"$tmp/edited/migrations/${next}_draft.sql"
run edited check
[ $status = 0 ] && pass "the draft as the next migration makes the check pass" || fail "after the draft: $out"

# 3. A function removed from the schema: the draft drops it, and applying it agrees again.
fresh_copy removed
rm "$tmp/removed/schema/functions/claims/poll_for_tasks.sql"
sed -i '\|functions/claims/poll_for_tasks.sql|d' "$tmp/removed/schema/pgflow.sql"
run removed next-migration
draft=$out
contains "$draft" "drop function pgflow.poll_for_tasks(" && pass "the draft drops a removed function" \
  || fail "draft for a removed function: $draft"
printf '%s\n' "$draft" >"$tmp/removed/migrations/${next}_draft.sql"
run removed check
[ $status = 0 ] && pass "dropping it makes the check pass" || fail "after dropping: $out"

# 4. A changed result type: the draft drops the old function before creating the new one.
fresh_copy retyped
sed -i 's/returns int$/returns bigint/; s/select 2$/select 2::bigint/' "$tmp/retyped/schema/functions/workers/worker_protocol.sql"
run retyped next-migration
draft=$out
if contains "$draft" "drop function pgflow.worker_protocol();" &&
   [ "$(grep -n 'drop function pgflow.worker_protocol' <<<"$draft" | cut -d: -f1)" -lt \
     "$(grep -n 'create or replace function pgflow.worker_protocol' <<<"$draft" | cut -d: -f1)" ]; then
  pass "a changed result type is dropped first"
else
  fail "draft for a changed result type: $draft"
fi

# 5. A table changed in the schema: listed for hand-written DDL, nothing generated for it.
fresh_copy table
sed -i 's/^  protocol          int not null$/  protocol          int not null,\n  note              text/' "$tmp/table/schema/0030_workers.sql"
run table next-migration
contains "$out" "--   changed: workers; Type: TABLE; Schema: pgflow" && contains "$out" "No function differs." \
  && pass "a table change is left to hand-written DDL" || fail "draft for a table change: $out"
run table check
[ $status = 1 ] && contains "$out" "+    note text" && pass "check shows the table difference" \
  || fail "check of a table change: $out"

# 6. A schema file that pgflow.sql does not build: the check refuses, naming it.
fresh_copy unlisted
cp "$tmp/unlisted/schema/functions/workers/worker_protocol.sql" "$tmp/unlisted/schema/functions/workers/extra.sql"
run unlisted check
[ $status != 0 ] && contains "$out" "functions/workers/extra.sql is included 0 times" \
  && pass "an unlisted schema file is refused" || fail "unlisted file: $out"

# 7. A migration that drifts from the schema: the check names the object.
fresh_copy drift
# (in the last migration that defines the function: a later one would replace the drift)
last=$(grep -l "function pgflow.calculate_retry_delay" "$tmp/drift/migrations/"*.sql | tail -n 1)
sed -i 's/2147483647)::int;/2147483647)::int + 0;/' "$last"
run drift check
[ $status = 1 ] && contains "$out" "changed: calculate_retry_delay(numeric, integer); Type: FUNCTION" \
  && pass "a drifting migration is named" || fail "drifting migration: $out"

echo "$failures failure(s)"
[ $failures = 0 ]
