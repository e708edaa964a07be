#!/usr/bin/env bash
# dev-template.sh CLUSTER_DIR TEMPLATE
#
# For SQL development without a C++ build: (re)creates TEMPLATE from the SQL files as they are
# on disk (sql/pgmq/pgmq.sql, every sql/migrations/*.sql in order, tests/sql/_setup/*.sql), the
# same content `pgflow migrate` installs, minus the ledger. Then run tests with
#   tests/sql/run-pgtap.sh CLUSTER_DIR TEMPLATE tests/sql/<folder>/*.test.sql
# ctest uses setup-template.sh instead, which installs through the real `pgflow migrate`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$1; template=$2
url=$("$root/scripts/pgcluster" start "$cluster" --fast)
base=${url%/*}
psql "$url" -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
select pg_terminate_backend(pid) from pg_stat_activity where datname = '$template';
drop database if exists "$template";
create database "$template";
SQL
psql "$base/$template" -q -v ON_ERROR_STOP=1 -1 -f "$root/sql/pgmq/pgmq.sql" >/dev/null
for f in "$root"/sql/migrations/*.sql; do
  psql "$base/$template" -q -v ON_ERROR_STOP=1 -1 -f "$f" >/dev/null
done
for f in "$root"/tests/sql/_setup/*.sql; do
  psql "$base/$template" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null 2>&1
done
echo "template $template ready on $url"
