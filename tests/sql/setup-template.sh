#!/usr/bin/env bash
# setup-template.sh CLUSTER_DIR TEMPLATE PGFLOW_BINARY SETUP_DIR
#
# (Re)creates the database TEMPLATE that database tests clone: all pgflow migrations (through
# the `pgflow migrate` program, as users install it), then every SETUP_DIR/*.sql in name order
# (pgtap, dblink and the pgflow_tests helpers).
set -euo pipefail
url=$(cat "$1/url"); template=$2; pgflow=$3; setup_dir=$4
base=${url%/*}
psql "$url" -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
select pg_terminate_backend(pid) from pg_stat_activity where datname = '$template';
drop database if exists "$template";
create database "$template";
SQL
"$pgflow" migrate --database "$base/$template" >/dev/null
"$pgflow" status --database "$base/$template" | grep -q "up to date"
for f in "$setup_dir"/*.sql; do
  psql "$base/$template" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null
done
echo "template $template ready"
