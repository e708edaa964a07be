#!/usr/bin/env bash
# run-pgtap.sh CLUSTER_DIR TEMPLATE FILE...
#
# Runs each pgTAP file with pg_prove in its own database, cloned from TEMPLATE (a migrated
# database with pgtap, dblink and the pgflow_tests helpers), and drops it afterwards. Files are
# therefore independent and may commit. current_setting('pgflow_tests.template') names TEMPLATE. Files run from their own folder so `\i` works.
set -uo pipefail
url=$(cat "$1/url"); template=$2; shift 2
base=${url%/*}
failed=0
for file in "$@"; do
  db="t_$(basename "$file" .test.sql | tr -c 'a-zA-Z0-9_\n' '_' | cut -c1-40)_$$_$RANDOM"
  if ! psql "$url" -q -v ON_ERROR_STOP=1 -c "create database \"$db\" template \"$template\"" >/dev/null; then
    echo "run-pgtap: could not create database for $file" >&2
    failed=1
    continue
  fi
  # pgflow_tests.template: for a file that needs a second database cloned like its own.
  (cd "$(dirname "$file")" && PGOPTIONS="--client-min-messages=warning -c pgflow_tests.template=$template" \
     pg_prove --dbname "$base/$db" --failures --ext .sql "$(basename "$file")") || failed=1
  psql "$url" -q -c "drop database if exists \"$db\" with (force)" >/dev/null || true
done
exit $failed
