#!/usr/bin/env bash
# run-pgtap.sh CLUSTER_DIR TEMPLATE FILE...
#
# Runs the pgTAP files with pg_prove, each in its own database cloned from TEMPLATE (a migrated
# database with pgtap, dblink and the pgflow_tests helpers) and dropped afterwards
# (pgtap-psql.sh, the psql pg_prove is given). Files are therefore independent and may commit.
# current_setting('pgflow_tests.template') names TEMPLATE. One pg_prove runs the files of a
# folder, from that folder so `\i` works: a pg_prove per file cost a Perl start each.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
url=$(cat "$1/url"); template=$2; shift 2
export PGFLOW_PGTAP_ADMIN_URL=$url PGFLOW_PGTAP_TEMPLATE=$template
failed=0
dirs=()
declare -A files_of
for file in "$@"; do
  dir=$(dirname "$file")
  [ -n "${files_of[$dir]:-}" ] || dirs+=("$dir")
  files_of[$dir]+="$(basename "$file")"$'\n'
done
for dir in "${dirs[@]}"; do
  mapfile -t names < <(printf '%s' "${files_of[$dir]}")
  # pgflow_tests.template: for a file that needs a second database cloned like its own.
  (cd "$dir" && PGOPTIONS="--client-min-messages=warning -c pgflow_tests.template=$template" \
     pg_prove --psql-bin "$here/pgtap-psql.sh" --failures --ext .sql "${names[@]}") || failed=1
done
exit $failed
