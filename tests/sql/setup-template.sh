#!/usr/bin/env bash
# setup-template.sh CLUSTER_DIR TEMPLATE PGFLOW_BINARY SETUP_DIR
#
# (Re)creates the database TEMPLATE that database tests clone: PGMQ in the mode
# $PGFLOW_TEST_PGMQ asks for, all pgflow migrations (through the `pgflow migrate` program, as
# users install it), then every SETUP_DIR/*.sql in name order (pgtap, dblink and the
# pgflow_tests helpers).
#
# PGFLOW_TEST_PGMQ=bundled (the default): pgflow's bundled PGMQ layer, installed before migrate
#   so that it is used even when the server also offers the extension.
# PGFLOW_TEST_PGMQ=extension: the real `pgmq` extension (the server must offer it:
#   scripts/pgmq-extension-pg).
set -euo pipefail
url=$(cat "$1/url"); template=$2; pgflow=$3; setup_dir=$4
base=${url%/*}
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${PGFLOW_TEST_PGMQ:-bundled}
case $mode in
  bundled) pgmq_setup=(-1 -f "$root/sql/pgmq/pgmq.sql") ;;
  extension) pgmq_setup=(-c "create extension pgmq") ;;
  *) echo "setup-template: PGFLOW_TEST_PGMQ must be bundled or extension, not '$mode'" >&2; exit 2 ;;
esac
psql "$url" -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
select pg_terminate_backend(pid) from pg_stat_activity where datname = '$template';
drop database if exists "$template";
create database "$template";
SQL
psql "$base/$template" -q -v ON_ERROR_STOP=1 "${pgmq_setup[@]}" >/dev/null
"$pgflow" migrate --database "$base/$template" >/dev/null
status=$("$pgflow" status --database "$base/$template") || { echo "$status" >&2; exit 1; }
grep -q "up to date" <<<"$status" || { echo "$status" >&2; exit 1; }
grep -q "PGMQ: $mode" <<<"$status" || { echo "setup-template: expected PGMQ mode $mode:" >&2; echo "$status" >&2; exit 1; }
for f in "$setup_dir"/*.sql; do
  psql "$base/$template" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null
done
echo "template $template ready (PGMQ: $mode)"
