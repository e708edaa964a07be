#!/usr/bin/env bash
# consumer_runs_a_flow.sh CLUSTER_DIR PGFLOW CONSUMER
#
# The installed package at work, as the README's users run it: a fresh database, the installed
# `pgflow migrate` (PGMQ from the server's extension if it has one, else the bundled layer),
# then the consumer built against the install (tests/install/main.cc) runs its flow there with
# a worker and reads the typed output. The database is dropped afterwards.
set -euo pipefail
cluster=$1 pgflow=$2 consumer=$3
url=$(cat "$cluster/url")
db=install_consumer_$$
psql "$url" -q -v ON_ERROR_STOP=1 -c "create database $db" >/dev/null
trap 'psql "$url" -q -c "drop database if exists $db with (force)" >/dev/null' EXIT
"$pgflow" migrate --database "${url%/*}/$db"
"$consumer" "${url%/*}/$db"
