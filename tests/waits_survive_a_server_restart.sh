#!/usr/bin/env bash
# waits_survive_a_server_restart.sh PGFLOW_CLI
#
# A wait step's timer and its buffered signal live in the database (docs/waiting.md): on a
# cluster of its own (so the shared test cluster keeps running), a run with a sleep, a wait
# for a signal with a timeout and a signal buffered for a step not waiting yet goes through a
# PostgreSQL restart with every deadline and the buffered signal unchanged; after it, `pgflow
# run signal` delivers, the buffered signal is taken, the sleep's timer fires, and the run
# completes. Runs as ctest db.waits_survive_a_server_restart.
set -euo pipefail
cli=$1
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/pgflow-waits-restart.XXXXXX)
chmod 755 "$work"
trap '"$root/scripts/pgcluster" remove "$work/cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$root/scripts/pgcluster" start "$work/cluster" --fast >/dev/null
url=$("$root/scripts/pgcluster" url "$work/cluster")
export DATABASE_URL=$url
"$cli" migrate >/dev/null
q() { psql "$url" -X -q -v ON_ERROR_STOP=1 -At -c "$1"; }

run=01a2f000-0000-7000-8000-000000000001
q "select pgflow.create_flow('restartWaits');
   select pgflow.add_wait_step('restartWaits', 'nap', '{\"kind\": \"sleep\", \"seconds\": 2}');
   select pgflow.add_wait_step('restartWaits', 'approve', '{\"kind\": \"signal\", \"timeout\": 3600}');
   select pgflow.add_wait_step('restartWaits', 'confirm', '{\"kind\": \"signal\"}', '{nap}');
   select pgflow.start_flow('restartWaits', '{}', '$run');
   select pgflow.send_signal('$run', 'confirm', 'early', '\"yes\"');" >/dev/null
before=$(q "select string_agg(step_slug || ' ' || status || ' ' || coalesce(wake_at::text, '-'), ', ' order by step_slug)
            from pgflow.step_tasks where run_id = '$run'")
buffered=$(q "select signal_id || ' ' || payload::text || ' ' || (consumed_at is null) from pgflow.signals where run_id = '$run'")
[ "$buffered" = 'early "yes" true' ] || fail "the signal was not buffered: $buffered"

"$root/scripts/pgcluster" stop "$work/cluster" >/dev/null
"$root/scripts/pgcluster" start "$work/cluster" --fast >/dev/null

after=$(q "select string_agg(step_slug || ' ' || status || ' ' || coalesce(wake_at::text, '-'), ', ' order by step_slug)
           from pgflow.step_tasks where run_id = '$run'")
[ "$before" = "$after" ] || fail "waiting tasks changed across the restart: '$before' became '$after'"
case $after in *"approve waiting"*"nap waiting"*) ;; *) fail "not waiting after the restart: $after" ;; esac
[ "$(q "select signal_id || ' ' || payload::text || ' ' || (consumed_at is null) from pgflow.signals where run_id = '$run'")" = "$buffered" ] ||
  fail "the buffered signal did not survive the restart"

out=$("$cli" run signal "$run" approve approval-1 --payload '{"ok": true}')
case $out in *"delivered"*) ;; *) fail "pgflow run signal: $out" ;; esac
out=$("$cli" run signal "$run" approve approval-1 --payload '{"ok": false}')
case $out in *"already sent"*) ;; *) fail "a resend is not a duplicate: $out" ;; esac

# The sleep's deadline passes; the timers (here called as pg_cron or a worker would) end it,
# confirm takes its buffered signal as it starts waiting, and the run completes.
for _ in $(seq 1 300); do
  q "select pgflow.wake_waiting_tasks()" >/dev/null
  [ "$(q "select status from pgflow.runs where run_id = '$run'")" = completed ] && break
  sleep 0.1
done
[ "$(q "select status from pgflow.runs where run_id = '$run'")" = completed ] ||
  fail "the run did not complete: $(q "select pgflow.get_run_with_states('$run')")"
[ "$(q "select output->>'confirm' from pgflow.runs where run_id = '$run'")" = yes ] ||
  fail "confirm did not take the buffered signal"
"$cli" run show "$run" | grep -q "completed" || fail "pgflow run show"
echo "ok: timers and a buffered signal survived a PostgreSQL restart"
