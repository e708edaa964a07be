-- Outcome "claimed": an eligible queued task is started for the worker (attempt counted,
-- last_worker_id set) and its message hidden for the step's effective timeout + 2 s; the row
-- carries what start_tasks returned (input, flow_input) plus the attempt and the timeout. The
-- queue argument is case-insensitive and the outcome reports the canonical queue.
begin;
select plan(12);

select pgflow.create_flow('myFlow', timeout => 10, max_attempts => 3, base_delay => 1);
select pgflow.add_step('myFlow', 'a', timeout => 20);
select pgflow.add_step('myFlow', 'b', array['a']);
select pgflow.add_step('myFlow', 'm', array['a'], step_type => 'map');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'myFlow', 'myflow', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('myFlow', '{"k": 1}') \gset
select message_id as a_msg from pgflow.step_tasks where step_slug = 'a' \gset

select clock_timestamp() as t0 \gset
create temp table claimed as
select * from pgflow.claim_tasks('MyFlow', 'myFlow', array[:a_msg]::bigint[], '11111111-1111-1111-1111-111111111111');
select clock_timestamp() as t1 \gset

select results_eq($$select outcome, queue_name, msg_id, flow_slug, run_id, step_slug, task_index, attempt, input, flow_input, reason, timeout from claimed$$,
                  format($$values ('claimed'::text, 'myflow'::text, %s::bigint, 'myFlow'::text, %L::uuid, 'a'::text, 0, 1,
                                   '{}'::jsonb, '{"k": 1}'::jsonb, null::text, 20)$$, :a_msg, :'run'),
                  'a root single step: claimed with input {}, the flow input, attempt 1 and its own timeout 20');
select results_eq($$select status, attempts_count, last_worker_id, started_at = now() from pgflow.step_tasks where step_slug = 'a'$$,
                  $$values ('started'::text, 1, '11111111-1111-1111-1111-111111111111'::uuid, true)$$,
                  'the task is started for this worker');
select ok((select vt between :'t0'::timestamptz + interval '22 s' and :'t1'::timestamptz + interval '22 s' from pgmq.q_myflow where msg_id = :a_msg),
          'its message is hidden for timeout + 2 s (22 s)');

select pgflow.complete_task(:'run', 'a', 0, '[5, 6]');
select clock_timestamp() as t2 \gset
create temp table second as
select * from pgflow.claim_tasks('myflow', 'myFlow', array(select message_id from pgflow.step_tasks where step_slug in ('b', 'm')),
                                 '11111111-1111-1111-1111-111111111111');
select clock_timestamp() as t3 \gset
select results_eq($$select step_slug, task_index, outcome, attempt, input, flow_input, timeout from second order by step_slug, task_index$$,
                  $$values ('b'::text, 0, 'claimed'::text, 1, '{"a": [5, 6]}'::jsonb, null::jsonb, 10),
                           ('m', 0, 'claimed', 1, '5'::jsonb, null, 10),
                           ('m', 1, 'claimed', 1, '6'::jsonb, null, 10)$$,
                  'dependents: {dep: output} for a single step, elements for a map, no flow input, the flow timeout');
select ok((select bool_and(q.vt between :'t2'::timestamptz + interval '12 s' and :'t3'::timestamptz + interval '12 s')
           from pgmq.q_myflow q join second s on s.msg_id = q.msg_id),
          'their messages are hidden for the flow timeout + 2 s (12 s)');
select is((select array_agg(msg_id order by msg_id) from second),
          array(select message_id from pgflow.step_tasks where step_slug in ('b', 'm') order by 1),
          'one row per message, in message id order');

-- A retried task is claimed again with the next attempt number.
select pgflow.fail_task(:'run', 'b', 0, 'boom');
select results_eq(format($$select outcome, attempt from pgflow.claim_tasks('myflow', 'myFlow', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'b')),
                  $$values ('claimed'::text, 2)$$, 'a retried task is claimed with attempt 2');

-- The same message claimed twice in one call is one claim.
select pgflow.fail_task(:'run', 'b', 0, 'boom');
select results_eq(format($$select outcome, attempt from pgflow.claim_tasks('myflow', 'myFlow', array[%1$s, %1$s, null]::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'b')),
                  $$values ('claimed'::text, 3)$$, 'duplicate and NULL ids in the batch are ignored');

select is_empty($$select * from pgflow.claim_tasks('myflow', 'myFlow', '{}', '11111111-1111-1111-1111-111111111111')$$,
                'an empty batch returns nothing');

-- The 0.16.0 SQL signature delegates to claim_tasks and returns the claimed tasks only.
select pgflow.fail_task(:'run', 'm', 0, 'boom');
select results_eq(format($$select flow_slug, step_slug, task_index, input, msg_id from pgflow.start_tasks('myFlow', array[%s, %s]::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'm' and task_index = 0),
                         (select message_id from pgflow.step_tasks where step_slug = 'm' and task_index = 1)),
                  format($$values ('myFlow'::text, 'm'::text, 0, '5'::jsonb, %s::bigint)$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'm' and task_index = 0)),
                  'start_tasks(flow_slug, ...) returns only the claimed task, not the deferred one');
select is((select attempts_count from pgflow.step_tasks where step_slug = 'm' and task_index = 1), 1,
          '(the running task was not claimed again)');
select has_function('pgflow', 'claim_tasks', array['text', 'text', 'bigint[]', 'uuid', 'text'],
                    'claim_tasks(queue_name, flow_slug, msg_ids, worker_id, step_slug)');

select * from finish();
rollback;
