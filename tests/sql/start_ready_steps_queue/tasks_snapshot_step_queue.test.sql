-- start_ready_steps sends each ready step's messages to the step's queue (steps.queue_name,
-- lower(flow_slug) for a camelCase flow) and stores that queue on every task it inserts, for
-- root steps and for dependents started later. (The NOTIFY on pgflow_queue:<queue> cannot be
-- observed in pgTAP; the C++ tests cover it.)
begin;
select plan(7);

select pgflow.create_flow('camelFlow', timeout => 5);
select pgflow.add_step('camelFlow', 'first');
select pgflow.add_step('camelFlow', 'items', array['first'], step_type => 'map');
select run_id as run from pgflow.start_flow('camelFlow', '{"x": 1}') \gset

select results_eq($$select step_slug, queue_name from pgflow.step_tasks$$, $$values ('first'::text, 'camelflow'::text)$$,
                  'the root task snapshots the lowercase queue');
select results_eq($$select msg_id, message from pgmq.q_camelflow$$,
                  format($$select message_id, jsonb_build_object('flow_slug', 'camelFlow', 'run_id', %L::uuid,
                                                                  'step_slug', 'first', 'task_index', 0)
                           from pgflow.step_tasks$$, :'run'),
                  'its message is in that queue under the task''s message id, addressed to the exact flow slug');

select pgflow_tests.complete_step_task(:'run', 'first', 0, '[10, 20, 30]');
select results_eq($$select task_index, queue_name from pgflow.step_tasks where step_slug = 'items' order by 1$$,
                  $$values (0, 'camelflow'::text), (1, 'camelflow'), (2, 'camelflow')$$,
                  'the dependent map''s tasks snapshot the queue too');
select set_eq($$select msg_id from pgmq.q_camelflow$$,
              $$select message_id from pgflow.step_tasks where step_slug = 'items'$$,
              'their messages are in it');
select is((select count(*) from pgmq.meta), 1::bigint, 'no other queue was created');
select is_empty($$select 1 from pgflow.step_tasks where queue_name <> lower(flow_slug)$$,
                'every task''s queue is lower(flow_slug)');
select is_empty($$select 1 from pgflow.step_tasks t join pgflow.steps s using (flow_slug, step_slug)
                  where t.queue_name <> s.queue_name$$, 'and equals its step''s queue_name');

select * from finish();
rollback;
