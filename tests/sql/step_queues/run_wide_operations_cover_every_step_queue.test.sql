-- Operations over several tasks of a run work per task queue snapshot: a forced skip cascade
-- whose steps have tasks in several private queues archives in all of them (upstream shipped a
-- defect that archived only in the first), and a failed run cancels and archives its tasks in
-- every queue.
begin;
select plan(8);

-- gate -> (left, right), each in its own queue; a second root `other`.
select pgflow_tests.compile_step_flow('spread', jsonb_build_array(
  pgflow_tests.step_shape('gate'),
  pgflow_tests.step_shape('left', array['gate']),
  pgflow_tests.step_shape('right', array['gate']),
  pgflow_tests.step_shape('other', options => '{"maxAttempts": 1}')));
select run_id as run from pgflow.start_flow('spread', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'gate', 0, '{}');
select is(array(select queue_name from pgflow.step_tasks where run_id = :'run' and status = 'queued' order by 1),
          array['spread__left', 'spread__other', 'spread__right'], 'three queued tasks in three queues');

select is(pgflow._cascade_force_skip_steps(:'run', 'gate', 'condition_unmet'), 2,
          'a cascade below the completed gate skips left and right');
select is(array(select step_slug || ':' || status from pgflow.step_tasks
                where run_id = :'run' and step_slug in ('left', 'right') order by 1),
          array['left:skipped', 'right:skipped'], 'their tasks are skipped');
select is(((pgflow_tests.queue_counts('spread__left')).archived, (pgflow_tests.queue_counts('spread__right')).archived,
           (pgflow_tests.queue_counts('spread__left')).active + (pgflow_tests.queue_counts('spread__right')).active),
          (1::bigint, 1::bigint, 0::bigint), 'and their messages archived in both queues');
select is((pgflow_tests.queue_counts('spread__other')).active, 1::bigint, 'the unrelated queue is untouched');

-- A second run: `other` fails for good, so the run fails and cancels left/right in their queues.
select run_id as run2 from pgflow.start_flow('spread', '{}') \gset
select pgflow_tests.complete_step_task(:'run2', 'gate', 0, '{}');
select pgflow_tests.fail_step_task(:'run2', 'other', 0, 'boom');
select is((select status from pgflow.runs where run_id = :'run2'), 'failed', 'the run failed');
select is(array(select step_slug || ':' || status from pgflow.step_tasks
                where run_id = :'run2' and step_slug in ('left', 'right') order by 1),
          array['left:cancelled', 'right:cancelled'], 'its tasks in the other queues are cancelled');
select is(((pgflow_tests.queue_counts('spread__left')).active, (pgflow_tests.queue_counts('spread__right')).active),
          (0::bigint, 0::bigint), 'and their messages archived');

select * from finish();
rollback;
