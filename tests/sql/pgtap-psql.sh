#!/usr/bin/env bash
# pgtap-psql.sh: the psql that run-pgtap.sh gives pg_prove (--psql-bin). It runs psql, with
# pg_prove's arguments, on a database of its own: cloned from $PGFLOW_PGTAP_TEMPLATE for this
# one file on the server of $PGFLOW_PGTAP_ADMIN_URL, and dropped afterwards. So every file
# starts from the template and may commit, while one pg_prove serves a whole folder.
set -uo pipefail
admin=$PGFLOW_PGTAP_ADMIN_URL
args=()
file=unknown
while [ $# -gt 0 ]; do
  case "$1" in
    --dbname) shift ;;  # replaced by the file's own database
    --file) file=$2; shift ;;  # run by the script below
    *) args+=("$1") ;;
  esac
  shift
done
db="t_$(basename "$file" .test.sql | tr -c 'a-zA-Z0-9_\n' '_' | cut -c1-40)_$$_$RANDOM"
db_url=${admin%/*}/$db
# One psql for the whole life of the database (a process start costs more than the statements):
# create it, connect to it, run the file, and drop it from the admin connection. FILE_COPY
# copies the template's files rather than writing each page to the WAL: faster on a test cluster.
psql "${args[@]}" --dbname "$admin" --file - <<SQL
create database "$db" template "$PGFLOW_PGTAP_TEMPLATE" strategy file_copy;
\\connect $db_url
\\i '$file'
\\connect $admin
drop database "$db" with (force);
SQL
status=$?
# psql stops at the file's first error (ON_ERROR_STOP), before the drop.
if [ $status != 0 ]; then
  psql "$admin" -X -q -c "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
fi
exit $status
