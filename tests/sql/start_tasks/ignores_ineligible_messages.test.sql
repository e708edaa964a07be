-- Message ids without a queued task of this flow are silently ignored: unknown ids, ids of
-- another flow's queue, tasks already started or completed, empty and NULL arrays.
begin;
select plan(7);

select pgflow_tests.setup_flow('sequential');
select pgflow_tests.setup_flow('sequential_other');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow.start_flow('other', '{}');
select pgflow_tests.ensure_worker('sequential');
select message_id as msg from pgflow.step_tasks where flow_slug = 'sequential' \gset
select message_id as other_msg from pgflow.step_tasks where flow_slug = 'other' \gset

select is(:msg::bigint, :other_msg::bigint, '(both queues start their ids at 1)');
select is_empty($$select * from pgflow.start_tasks('sequential', array[999], '11111111-1111-1111-1111-111111111111')$$,
                'an unknown id claims nothing');
select results_eq(format($$select flow_slug from pgflow.start_tasks('sequential', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :msg),
                  $$values ('sequential'::text)$$, 'only the task of the named flow is claimed');
select is((select status from pgflow.step_tasks where flow_slug = 'other'), 'queued',
          'the other flow''s task with the same message id is untouched');
select is_empty(format($$select * from pgflow.start_tasks('sequential', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :msg),
                'a started task is not claimed again');
select is((select attempts_count from pgflow.step_tasks where flow_slug = 'sequential'), 1,
          'and its attempt count did not grow');

select pgflow.complete_task(:'run', 'first', 0, '{}');
select ok(
  not exists (select 1 from pgflow.start_tasks('sequential', array[:msg]::bigint[], '11111111-1111-1111-1111-111111111111'))
  and not exists (select 1 from pgflow.start_tasks('sequential', '{}', '11111111-1111-1111-1111-111111111111'))
  and not exists (select 1 from pgflow.start_tasks('sequential', null, '11111111-1111-1111-1111-111111111111')),
  'a completed task, an empty and a NULL array claim nothing');

select * from finish();
rollback;
