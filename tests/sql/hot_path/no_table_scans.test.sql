-- The hot paths and the operators' queries reach runs, step states and tasks by index only,
-- also without the indexes 0015 dropped: with a history of finished runs in the tables (and
-- fresh statistics that say so), starting runs, claiming, completing (batch and one by one),
-- failing, retrying, release_claim, cancel_run, stall recovery and the metrics query's
-- predicate scan none of the three tables whole (pg_stat_xact_user_tables counts this
-- transaction's scans). Compiling and deleting flows are not hot: a deletion's foreign-key
-- check per deleted step scans step_states (docs/operations.md).
begin;
select plan(5);

-- History: 400 finished runs of another flow.
select pgflow_tests.setup_flow('sequential_other');
select count(*) from (select pgflow.start_flow('other', '{}') from generate_series(1, 400)) x;
do $$ begin
  for i in 1 .. 10 loop  -- one pass per step, more if a pass leaves some (visibility 60 s)
    exit when not exists (select 1 from pgflow.runs where flow_slug = 'other' and status = 'started');
    perform pgflow_tests.reset_message_visibility('other');
    perform pgflow_tests.poll_and_complete('other', 60, 400);
  end loop;
end $$;
select is((select count(*)::int from pgflow.runs where flow_slug = 'other' and status = 'completed'), 400,
  'the history: 400 completed runs');
analyze pgflow.runs, pgflow.step_states, pgflow.step_tasks;

select pgflow.create_flow('m', max_attempts => 2, base_delay => 0, timeout => 60);
select pgflow.add_step('m', 'items', step_type => 'map');
select pgflow.add_step('m', 'sum', array['items']);
select pgflow_tests.ensure_worker('m');

create temp table scans_before as
select relname, seq_scan from pg_stat_xact_user_tables
where schemaname = 'pgflow' and relname in ('runs', 'step_states', 'step_tasks');

-- The work: runs of a map flow, batched and single results, a failure with a retry, a
-- release, a cancellation, stall recovery, the metrics query's predicate.
select count(*) from (select pgflow.start_flow('m', '[1, 2, 3]') from generate_series(1, 5)) x;
select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
                                      'task_index', c.task_index, 'output', c.task_index))
  from pgflow.claim_tasks('m', 'm', array(select m.msg_id from pgmq.read('m', 60, 12) m),
                          '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c
  where c.outcome = 'claimed'));
select count(*) from pgflow_tests.read_and_start('m', 60, 1) t,
  lateral pgflow.fail_task(t.run_id, t.step_slug, t.task_index, 'boom') f;
select count(*) from pgflow.release_claim('11111111-1111-1111-1111-111111111111', gen_random_uuid());
select count(*) from pgflow.cancel_run((select run_id from pgflow.runs where flow_slug = 'm' and status = 'started' limit 1));
select pgflow.requeue_stalled_tasks();
select count(*) from pgflow.step_tasks st
where st.flow_slug = 'm' and (st.status = 'queued' or st.status = 'started');

select is((select s.seq_scan - b.seq_scan from pg_stat_xact_user_tables s join scans_before b using (relname)
           where s.schemaname = 'pgflow' and s.relname = 'runs'), 0::bigint, 'runs: no whole-table scan');
select is((select s.seq_scan - b.seq_scan from pg_stat_xact_user_tables s join scans_before b using (relname)
           where s.schemaname = 'pgflow' and s.relname = 'step_states'), 0::bigint, 'step_states: no whole-table scan');
select is((select s.seq_scan - b.seq_scan from pg_stat_xact_user_tables s join scans_before b using (relname)
           where s.schemaname = 'pgflow' and s.relname = 'step_tasks'), 0::bigint, 'step_tasks: no whole-table scan');
select is((select count(*)::int from pgflow.runs where flow_slug = 'm' and status = 'failed'), 1,
  'the work ran (one run cancelled)');

select * from finish();
rollback;
