-- The optional pruning helper (sql/contrib/prune_data_older_than.sql) enumerates persisted routes,
-- so it deletes old archived messages from every private step queue, and old runs' active
-- messages from each task's own queue.
begin;
select plan(4);
\i ../../../sql/contrib/prune_data_older_than.sql

select pgflow_tests.compile_step_flow('pruned', jsonb_build_array(
  pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])));
select run_id as run from pgflow.start_flow('pruned', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'a', 0, '{}');
select pgflow_tests.complete_step_task(:'run', 'b', 0, '{}');
select run_id as live from pgflow.start_flow('pruned', '{}') \gset
select is(((pgflow_tests.queue_counts('pruned__a')).archived, (pgflow_tests.queue_counts('pruned__b')).archived),
          (1::bigint, 1::bigint), 'one archived message in each step queue');

-- Age everything of the finished run.
update pgflow.runs set started_at = started_at - interval '30 days', completed_at = completed_at - interval '30 days'
where run_id = :'run';
update pgmq.a_pruned__a set archived_at = archived_at - interval '30 days';
update pgmq.a_pruned__b set archived_at = archived_at - interval '30 days';

select pgflow.prune_data_older_than('7 days');
select is(((pgflow_tests.queue_counts('pruned__a')).archived, (pgflow_tests.queue_counts('pruned__b')).archived),
          (0::bigint, 0::bigint), 'old archives are pruned in both step queues');
select is(array(select run_id from pgflow.runs), array[:'live'::uuid], 'the old run is gone, the live one stays');
select is((pgflow_tests.queue_counts('pruned__a')).active, 1::bigint, 'the live run''s message is kept');

select * from finish();
rollback;
