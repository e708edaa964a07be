-- steps.queue_name and step_tasks.queue_name exist, are NOT NULL text and only hold canonical
-- queue names (lowercase, 1..47 characters); message_id stays a nullable bigint; runs and
-- step_states get no queue_name.
begin;
select plan(20);

select has_column('pgflow', 'steps', 'queue_name', 'steps.queue_name exists');
select col_type_is('pgflow', 'steps', 'queue_name', 'text', 'steps.queue_name is text');
select col_not_null('pgflow', 'steps', 'queue_name', 'steps.queue_name is NOT NULL');
select has_column('pgflow', 'step_tasks', 'queue_name', 'step_tasks.queue_name exists');
select col_type_is('pgflow', 'step_tasks', 'queue_name', 'text', 'step_tasks.queue_name is text');
select col_not_null('pgflow', 'step_tasks', 'queue_name', 'step_tasks.queue_name is NOT NULL');
select col_type_is('pgflow', 'step_tasks', 'message_id', 'bigint', 'step_tasks.message_id is bigint');
select col_is_null('pgflow', 'step_tasks', 'message_id', 'step_tasks.message_id is still nullable');
select hasnt_column('pgflow', 'runs', 'queue_name', 'runs get no queue_name');
select hasnt_column('pgflow', 'step_states', 'queue_name', 'step_states get no queue_name');
select hasnt_table('pgflow', 'queues', 'no queue registry table');

select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select run_id as run from pgflow.start_flow('f', '{}') \gset

-- steps: the canonical-name check.
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('f', 'b', 1, 'F')$$,
  '23514', 'new row for relation "steps" violates check constraint "queue_name_is_canonical"', 'steps: an uppercase queue name is rejected');
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('f', 'b', 1, repeat('q', 48))$$,
  '23514', 'new row for relation "steps" violates check constraint "queue_name_is_canonical"', 'steps: a 48-character queue name is rejected');
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('f', 'b', 1, '')$$,
  '23514', 'new row for relation "steps" violates check constraint "queue_name_is_canonical"', 'steps: an empty queue name is rejected');
select throws_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index) values ('f', 'b', 1)$$,
  '23502', 'null value in column "queue_name" of relation "steps" violates not-null constraint', 'steps: a missing queue name is rejected');
select lives_ok($$insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) values ('f', 'b', 1, repeat('q', 47))$$,
  'steps: a lowercase 47-character queue name is accepted');

-- step_tasks: the same check.
select throws_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, message_id)
                          values ('f', %L, 'a', 5, 'Alt', 1000)$$, :'run'),
  '23514', 'new row for relation "step_tasks" violates check constraint "queue_name_is_canonical"', 'step_tasks: an uppercase queue name is rejected');
select throws_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id)
                          values ('f', %L, 'a', 5, 1000)$$, :'run'),
  '23502', 'null value in column "queue_name" of relation "step_tasks" violates not-null constraint', 'step_tasks: a missing queue name is rejected');
select lives_ok(format($$insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, message_id)
                         values ('f', %L, 'a', 5, 'f', null)$$, :'run'),
  'step_tasks: a task without a queue message (message_id NULL) is allowed');
select is((select queue_name from pgflow.step_tasks where task_index = 5), 'f',
          'and it still carries its queue identity');

select * from finish();
rollback;
