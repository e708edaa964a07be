#!/usr/bin/env bash
# slot_cycle.sh [--tasks N] [--batch B] [--rounds R] [--to VERSION]
#
# What a concurrency limit's slot cycle costs the server per task, with the worker taken out
# (issue #31: a limit equal to the worker's concurrency, bench row l2). One session plays a
# worker of B slots (default 10) against three one-step flows of N queued tasks each (default
# 2,000), in a procedure that commits as a worker does (no network, no handler, full batches):
#   free     no limit: claim B (pgmq.read + claim_tasks), commit; report them (complete_tasks),
#            commit; again (the l1 row's statements);
#   limited  a step limit of B: the same statements; each report's commit frees B slots and
#            admits B held tasks (their messages are sent at that commit), which the next claim
#            takes (the l2 row's statements);
#   combined a step limit of B, complete-and-claim: report B, admit at once (SET CONSTRAINTS
#            ALL IMMEDIATE runs the admission the commit would run), claim what it admitted, one
#            commit for the three (the protocol #31's notes propose; not what workers do).
# Commits do not wait for their WAL flush (synchronous_commit off in the session), so the times
# are the server's work. R rounds (default 3), rotating which flow goes first; prints the
# median microseconds per task of each and their ratios to `free`. The database is migrated to
# the newest schema, or to VERSION (from 18, the first with limits). Needs the pgflow program.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
. "$root/bench/sql/lib.sh"
find_pgflow slot_cycle
tasks=2000; batch=10; rounds=3; to=
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
start_bench_cluster "$root/build/bench-sql-cluster"
"${psql[@]}" "$url" -c "set client_min_messages = warning" -c "drop database if exists cycle" \
  -c "create database cycle" >/dev/null
db=$base/cycle
"$pgflow" migrate --database "$db" ${to:+--to "$to"} >/dev/null

"${psql[@]}" "$db" >/dev/null <<SQL
create function pg_temp.compile(p_flow text, p_control jsonb) returns void language sql as \$\$
  select pgflow.ensure_flow_compiled(p_flow, jsonb_build_object('steps', jsonb_build_array(jsonb_build_object(
           'slug', 'work', 'stepType', 'single', 'dependencies', '[]'::jsonb, 'whenUnmet', 'skip',
           'whenExhausted', 'fail', 'requiredInputPattern', '{"defined": false}'::jsonb,
           'forbiddenInputPattern', '{"defined": false}'::jsonb))),
         pgflow.worker_protocol(), 'flow', null, null, p_control);
  select pgflow.register_worker(gen_random_uuid(), p_flow || '-worker', p_flow, p_flow, pgflow.worker_protocol());
\$\$;
select pg_temp.compile('free', null);
select pg_temp.compile('limited', '{"steps": {"work": {"concurrencyLimit": $batch}}}');
select pg_temp.compile('combined', '{"steps": {"work": {"concurrencyLimit": $batch}}}');

-- One worker's claim: reads up to p_batch visible messages and claims them (the worker's one
-- statement); returns the results its handlers would report.
create function public.bench_claim(p_flow text, p_batch int) returns jsonb language sql as \$\$
  select coalesce(jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
                                               'task_index', c.task_index, 'output', 1)), '[]')
  from pgflow.claim_tasks(p_flow, p_flow, array(select m.msg_id from pgmq.read(p_flow, 60, p_batch) m),
                          (select w.worker_id from pgflow.workers w where w.queue_name = p_flow), null,
                          gen_random_uuid()) c
  where c.outcome = 'claimed';
\$\$;

-- Drains p_tasks tasks of p_flow in batches of p_batch; p_together: report, admit and claim in
-- one transaction. Leaves the microseconds per task in p_us.
create procedure public.bench_drain(p_flow text, p_batch int, p_tasks int, p_together boolean,
                                    inout p_us numeric default null)
language plpgsql as \$\$
declare
  v_results jsonb;
  v_done int := 0;
  v_t0 timestamptz := clock_timestamp();
begin
  v_results := public.bench_claim(p_flow, p_batch);
  commit;
  while v_done < p_tasks and jsonb_array_length(v_results) > 0 loop
    perform count(*) from pgflow.complete_tasks(v_results);
    v_done := v_done + jsonb_array_length(v_results);
    if p_together then
      set constraints all immediate;  -- the admission the commit would run, now
    else
      commit;  -- frees the slots; a limited flow's admission runs at this commit
    end if;
    v_results := public.bench_claim(p_flow, p_batch);
    commit;
  end loop;
  if v_done < p_tasks then
    raise exception 'bench_drain: % drained % of % tasks', p_flow, v_done, p_tasks;
  end if;
  p_us := round(extract(epoch from clock_timestamp() - v_t0) * 1e6 / v_done, 1);
end;
\$\$;
SQL

declare -A times
flows=(free limited combined)
for ((r = 1; r <= rounds; r++)); do
  for f in "${flows[@]}"; do  # each flow's backlog for this round (one more batch than drained)
    "${psql[@]}" "$db" >/dev/null -c "select pgflow.start_run('$f', '{}') from generate_series(1, $tasks + $batch)"
  done
  "${psql[@]}" "$db" >/dev/null -c "vacuum analyze"
  for ((i = 0; i < 3; i++)); do
    f=${flows[$(((i + r) % 3))]}
    together=false
    [ "$f" = combined ] && together=true
    us=$("${psql[@]}" "$db" -c "set synchronous_commit = off" \
           -c "call public.bench_drain('$f', $batch, $tasks, $together)")
    times[$f]+="$us "
    echo "round $r/$rounds: $f $us us a task" >&2
  done
  "${psql[@]}" "$db" >/dev/null -c "select pgflow.cancel_run(r.run_id) from pgflow.runs r where r.status = 'started'"
done

free=$(printf '%s\n' ${times[free]} | median)
printf 'slot cycle, %s tasks in batches of %s, median of %s rounds (server time per task):\n' "$tasks" "$batch" "$rounds"
for f in "${flows[@]}"; do
  m=$(printf '%s\n' ${times[$f]} | median)
  printf '  %-9s %8s us  (%s x free)   rounds: %s\n' "$f" "$m" "$(awk "BEGIN {printf \"%.2f\", $m / $free}")" "${times[$f]}"
done
