-- (queue_name, message_id) identifies a queue-backed task: a partial unique index where
-- message_id is not null. Message ids are queue-scoped, so the same id in another queue is
-- fine, and any number of tasks may have no message. The 0001 index on message_id alone is
-- gone; message lookups and step routes are indexed by queue.
begin;
select plan(10);

select is((select indexdef from pg_indexes where schemaname = 'pgflow' and indexname = 'step_tasks_queue_message_key'),
  'CREATE UNIQUE INDEX step_tasks_queue_message_key ON pgflow.step_tasks USING btree (queue_name, message_id) WHERE (message_id IS NOT NULL)',
  'partial unique index step_tasks_queue_message_key (queue_name, message_id) where message_id is not null');
select hasnt_index('pgflow', 'step_tasks', 'idx_step_tasks_queued_msg',
  'no second (queue_name, message_id) index for queued tasks (since 0015: the key above serves claims)');
select is((select indexdef from pg_indexes where schemaname = 'pgflow' and indexname = 'idx_steps_queue_name'),
  'CREATE INDEX idx_steps_queue_name ON pgflow.steps USING btree (queue_name)',
  'steps are indexed by queue_name (route lookups)');
select hasnt_index('pgflow', 'step_tasks', 'idx_step_tasks_message_id', 'no index on message_id alone');
select is((select array_agg(a.attname order by k.n)
           from pg_index i
           join pg_class c on c.oid = i.indexrelid
           cross join unnest(i.indkey) with ordinality k(attnum, n)
           join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
           where c.relname = 'step_tasks_pkey' and c.relnamespace = 'pgflow'::regnamespace),
          array['run_id', 'step_slug', 'task_index']::name[], 'the task primary key is unchanged');

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as msg from pgflow.step_tasks \gset

select throws_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, message_id)
                          values ('f', %L, 'a', 1, 'f', %s)$$, :'run', :'msg'),
  '23505', 'duplicate key value violates unique constraint "step_tasks_queue_message_key"',
  'a second task with the same (queue, message id) is rejected');
select lives_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, message_id)
                         values ('f', %L, 'a', 1, 'other', %s)$$, :'run', :'msg'),
  'the same message id in another queue is another message');
select lives_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, message_id)
                         values ('f', %L, 'a', 2, 'f', null), ('f', %L, 'a', 3, 'f', null)$$, :'run', :'run'),
  'several tasks of one queue may have no message');
select is((select count(*) from pgflow.step_tasks where message_id is null), 2::bigint, '(both stored)');
select throws_ok(format($$update pgflow.step_tasks set message_id = %s where task_index = 2$$, :'msg'),
  '23505', 'duplicate key value violates unique constraint "step_tasks_queue_message_key"', 'giving a message-less task an id already used in its queue is rejected');

select * from finish();
rollback;
