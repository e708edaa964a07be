-- _send_task_messages sends one message per task to the queue it is given, in the order given
-- (a claim reads in message order), each naming its task; records each task's message id; a
-- held task that gets its message is admitted by it, a task without a gate keeps none; the
-- message is visible at once, or after the delay it is given. (It also announces visible work
-- with a NOTIFY, delivered at commit, which a pgTAP transaction never reaches: see
-- _announce_work's row in tests/sql/README.md.)
begin;
select plan(9);

-- Held tasks without messages: a limited flow's runs started in this transaction, whose
-- admission (at commit) never runs.
select pgflow.ensure_flow_compiled('capped', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work'))), pgflow.worker_protocol(),
         'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 1}}}')->>'status';
select pgflow.start_run('capped', '{"n": 1}') as r1 \gset
select pgflow.start_run('capped', '{"n": 2}') as r2 \gset
select pgflow.start_run('capped', '{"n": 3}') as r3 \gset
select is((select count(*) from pgflow.step_tasks where flow_slug = 'capped' and gate = 'held' and message_id is null),
          3::bigint, '(three held tasks without messages)');

select pgflow._send_task_messages('capped', 'capped', array[:'r3', :'r1']::uuid[], array['work', 'work'],
                                  array[0, 0], 0);
select results_eq($$select (message->>'run_id')::uuid from pgmq.q_capped order by msg_id$$,
                  format($$values (%L::uuid), (%L::uuid)$$, :'r3', :'r1'),
                  'one message per task, in the order given');
select results_eq($$select message from pgmq.q_capped order by msg_id limit 1$$,
                  format($$values (jsonb_build_object('flow_slug', 'capped', 'run_id', %L::uuid, 'step_slug', 'work',
                                                       'task_index', 0))$$, :'r3'),
                  'a message names its flow, run, step and task, as every task message does');
select is((select count(*) from pgflow.step_tasks t join pgmq.q_capped q on q.msg_id = t.message_id
           where (q.message->>'run_id')::uuid = t.run_id),
          2::bigint, 'each task records the id of the message that names it');
select results_eq(format($$select run_id, gate from pgflow.step_tasks where flow_slug = 'capped'
                           order by run_id = %L, run_id = %L$$, :'r2', :'r3'),
                  format($$values (%L::uuid, 'admitted'::text), (%L::uuid, 'admitted'), (%L::uuid, 'held')$$,
                         :'r1', :'r3', :'r2'),
                  'the held tasks that got messages are admitted; the other stays held');
select is((select count(*) from pgmq.q_capped where vt <= clock_timestamp()), 2::bigint,
          'with no delay the messages are visible at once');

-- A delay: visible after it.
select clock_timestamp() as t0 \gset
select pgflow._send_task_messages('capped', 'capped', array[:'r2']::uuid[], array['work'], array[0], 30);
select clock_timestamp() as t1 \gset
select ok((select q.vt between :'t0'::timestamptz + interval '30 seconds' and :'t1'::timestamptz + interval '30 seconds'
           from pgmq.q_capped q join pgflow.step_tasks t on t.message_id = q.msg_id where t.run_id = :'r2'),
          'with a delay the message becomes visible that many seconds after it was sent');

-- A task without a gate (a flow without limits, its message gone as a resumption finds it).
select pgflow.ensure_flow_compiled('free', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work'))), pgflow.worker_protocol())->>'status';
select pgflow.start_run('free', '{}') as r4 \gset
select pgmq.delete('free', (select message_id from pgflow.step_tasks where run_id = :'r4'));
update pgflow.step_tasks set message_id = null where run_id = :'r4';
select pgflow._send_task_messages('free', 'free', array[:'r4']::uuid[], array['work'], array[0], 0);
select is((select message_id from pgflow.step_tasks where run_id = :'r4'),
          (select msg_id from pgmq.q_free where (message->>'run_id')::uuid = :'r4'),
          'a task without a gate records its new message');
select is((select gate from pgflow.step_tasks where run_id = :'r4'), null, 'and still has no gate');

select * from finish();
rollback;
