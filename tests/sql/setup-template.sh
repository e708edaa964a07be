#!/usr/bin/env bash
# setup-template.sh CLUSTER_DIR TEMPLATE PGFLOW_BINARY HELPERS_SQL
#
# (Re)creates the database TEMPLATE that database tests clone: all pgflow migrations (through
# the `pgflow migrate` program, as users install it), pgtap, dblink and the pgflow_tests helpers.
set -euo pipefail
url=$(cat "$1/url"); template=$2; pgflow=$3; helpers=$4
base=${url%/*}
psql "$url" -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
select pg_terminate_backend(pid) from pg_stat_activity where datname = '$template';
drop database if exists "$template";
create database "$template";
SQL
"$pgflow" migrate --database "$base/$template" >/dev/null
psql "$base/$template" -q -v ON_ERROR_STOP=1 -f "$helpers" >/dev/null
echo "template $template ready"
