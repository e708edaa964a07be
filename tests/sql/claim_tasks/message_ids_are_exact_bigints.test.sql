-- Message ids are bigint end to end: ids above 2^53 (which a double cannot hold exactly) are
-- stored, claimed and returned exactly, and the neighbouring id a double would round to does
-- not match them.
begin;
select plan(7);

select pgflow.create_flow('big', timeout => 5);
select pgflow.add_step('big', 'a');
select pgflow.add_step('big', 'b');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'big', 'big', pgflow.worker_protocol());
select setval(pg_get_serial_sequence('pgmq.q_big', 'msg_id'), 9007199254740993, false);  -- 2^53 + 1
select pgflow.start_flow('big', '{}');

select results_eq($$select step_slug, message_id::text from pgflow.step_tasks order by step_slug$$,
                  $$values ('a'::text, '9007199254740993'::text), ('b', '9007199254740994')$$,
                  'the tasks store the ids exactly');
select is((select atttypid::regtype::text from pg_attribute where attrelid = 'pgflow.claim_record'::regclass and attname = 'msg_id'),
          'bigint', 'claim_record.msg_id is a bigint');
select is((9007199254740993::float8)::bigint, 9007199254740992::bigint, '(a double rounds 2^53 + 1 down)');

select results_eq($$select msg_id::text, outcome from pgflow.claim_tasks('big', 'big', array[9007199254740992]::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                  $$values ('9007199254740992'::text, 'gone'::text)$$, 'the rounded id matches nothing');
select results_eq($$select msg_id::text, outcome, step_slug from pgflow.claim_tasks('big', 'big', '{9007199254740993}'::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                  $$values ('9007199254740993'::text, 'claimed'::text, 'a'::text)$$, 'the exact id (decimal text cast to bigint[]) claims task a');
select results_eq($$select msg_id::text, step_slug from pgflow.start_tasks('big', '{9007199254740994}'::bigint[], '11111111-1111-1111-1111-111111111111')$$,
                  $$values ('9007199254740994'::text, 'b'::text)$$, 'start_tasks returns its id exactly too');
select results_eq($$select step_slug, status from pgflow.step_tasks order by 1$$,
                  $$values ('a'::text, 'started'::text), ('b', 'started')$$, 'each task was claimed by its own id');

select * from finish();
rollback;
