-- Outcome "archived": a message whose task is finished is archived idempotently; a clearly
-- foreign message (not a JSON object, or an object without any pgflow address key) is
-- archived without blocking valid work in the same batch. A live task whose message body
-- looks malformed is still claimed: the (queue, message id) lookup decides, not the body.
-- Outcome "gone": an id with neither a message nor a task; nothing happens.
begin;
select plan(10);

select pgflow.create_flow('f', timeout => 20);
select pgflow.add_step('f', 'done');
select pgflow.add_step('f', 'live');
select pgflow.add_step('f', 'odd');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as done_msg from pgflow.step_tasks where step_slug = 'done' \gset
select message_id as live_msg from pgflow.step_tasks where step_slug = 'live' \gset
select message_id as odd_msg from pgflow.step_tasks where step_slug = 'odd' \gset

-- "done" completes, but its message comes back (e.g. its archival was lost).
select pgflow_tests.complete_step_task(:'run', 'done');
insert into pgmq.q_f (msg_id, read_ct, enqueued_at, vt, message, headers) overriding system value
  select msg_id, read_ct, enqueued_at, clock_timestamp(), message, headers from pgmq.a_f;
delete from pgmq.a_f;
-- "odd"'s body is garbled; foreign messages arrive.
update pgmq.q_f set message = '"garbled"' where msg_id = :odd_msg;
select s.id as str_msg from pgmq.send('f', '"hello"') s(id) \gset
select s.id as arr_msg from pgmq.send('f', '[1, 2]') s(id) \gset
select s.id as obj_msg from pgmq.send('f', '{"order": 7, "note": "not for pgflow"}') s(id) \gset

create temp table outcomes as
select * from pgflow.claim_tasks('f', 'f', array[:done_msg, :live_msg, :odd_msg, :str_msg, :arr_msg, :obj_msg, 424242]::bigint[],
                                 '11111111-1111-1111-1111-111111111111');

select results_eq($$select msg_id, outcome, step_slug, reason from outcomes order by msg_id$$,
                  format($$values (%s::bigint, 'archived'::text, 'done'::text, 'its task is completed'::text),
                                  (%s, 'claimed', 'live', null),
                                  (%s, 'claimed', 'odd', null),
                                  (%s, 'archived', null, 'foreign message without a pgflow task address'),
                                  (%s, 'archived', null, 'foreign message without a pgflow task address'),
                                  (%s, 'archived', null, 'foreign message without a pgflow task address'),
                                  (424242, 'gone', null, 'no such message')$$,
                         :done_msg, :live_msg, :odd_msg, :str_msg, :arr_msg, :obj_msg),
                  'one outcome per message');
select set_eq($$select msg_id from pgmq.a_f$$, array[:done_msg, :str_msg, :arr_msg, :obj_msg]::bigint[],
              'the finished task''s and the foreign messages were archived');
select set_eq($$select msg_id from pgmq.q_f$$, array[:live_msg, :odd_msg]::bigint[],
              'the claimed messages stay in the queue');
select results_eq($$select step_slug, status, attempts_count from pgflow.step_tasks order by step_slug$$,
                  $$values ('done'::text, 'completed'::text, 1), ('live', 'started', 1), ('odd', 'started', 1)$$,
                  'the finished task is unchanged; the live ones (garbled body included) are claimed');
select is((select count(*) from pgflow.worker_functions where paused_at is not null), 0::bigint,
          'nothing is fatal: the worker function is not paused');

-- Idempotent: the finished task's message archived again, and an archived id is gone.
insert into pgmq.q_f (msg_id, read_ct, enqueued_at, vt, message, headers) overriding system value
  select msg_id, read_ct, enqueued_at, clock_timestamp(), message, headers from pgmq.a_f where msg_id = :done_msg;
delete from pgmq.a_f where msg_id = :done_msg;
select results_eq(format($$select outcome from pgflow.claim_tasks('f', 'f', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :done_msg),
                  $$values ('archived'::text)$$, 'a finished task''s message is archived each time it shows up');
select results_eq(format($$select outcome, reason from pgflow.claim_tasks('f', 'f', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :str_msg),
                  $$values ('gone'::text, 'no such message')$$, 'an already archived foreign message is gone');

-- Other terminal statuses are archived too.
update pgflow.step_tasks set status = 'cancelled' where step_slug = 'odd';
update pgflow.step_tasks set status = 'skipped' where step_slug = 'live';
select results_eq(format($$select msg_id, outcome, reason from pgflow.claim_tasks('f', 'f', array[%s, %s]::bigint[], '11111111-1111-1111-1111-111111111111') order by 1$$,
                         :live_msg, :odd_msg),
                  format($$values (%s::bigint, 'archived'::text, 'its task is skipped'::text), (%s, 'archived', 'its task is cancelled')$$,
                         :live_msg, :odd_msg),
                  'skipped and cancelled tasks'' messages are archived');
select is((select count(*) from pgmq.q_f), 0::bigint, 'the queue is empty');
select is_empty($$select 1 from pgflow.step_tasks where status = 'started'$$, '(no task was claimed by these calls)');

select * from finish();
rollback;
