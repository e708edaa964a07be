-- Since 0015 the run tables keep only the indexes a query needs: every status change of a
-- task or step state writes an entry into each index whose predicate its new row matches, so
-- an index no query reads costs on every task (bench/README.md, "Hot path").
begin;
select plan(4);

select is(array(select indexdef from pg_indexes
                where schemaname = 'pgflow' and tablename = 'step_tasks' order by indexname),
  array['CREATE INDEX idx_step_tasks_gated ON pgflow.step_tasks USING btree (flow_slug, gate, step_slug, priority DESC, queued_at, run_id, task_index) WHERE ((gate IS NOT NULL) AND (status = ANY (ARRAY[''queued''::text, ''started''::text])))',
        'CREATE INDEX idx_step_tasks_held_keys ON pgflow.step_tasks USING btree (flow_slug, step_slug, concurrency_key, priority DESC, queued_at, run_id, task_index) WHERE ((gate = ''held''::text) AND (status = ''queued''::text) AND (concurrency_key IS NOT NULL))',
        'CREATE INDEX idx_step_tasks_queued ON pgflow.step_tasks USING btree (flow_slug) WHERE (status = ''queued''::text)',
        'CREATE INDEX idx_step_tasks_started ON pgflow.step_tasks USING btree (last_worker_id) WHERE (status = ''started''::text)',
        'CREATE INDEX idx_step_tasks_wake_at ON pgflow.step_tasks USING btree (wake_at) WHERE ((status = ''waiting''::text) AND (wake_at IS NOT NULL))',
        'CREATE UNIQUE INDEX step_tasks_pkey ON pgflow.step_tasks USING btree (run_id, step_slug, task_index)',
        'CREATE UNIQUE INDEX step_tasks_queue_message_key ON pgflow.step_tasks USING btree (queue_name, message_id) WHERE (message_id IS NOT NULL)'],
  'step_tasks: the primary key, the message key of claims, waiting tasks by flow, running tasks by worker, and (only for limited flows'' tasks: others have no entry) slots held and tasks waiting for one, in admission order, and (only for keyed steps'' waiting tasks) those by key, and (only for wait steps'' waiting tasks with a deadline) those by deadline');
select is(array(select indexname::text from pg_indexes
                where schemaname = 'pgflow' and tablename = 'step_states' order by indexname),
  array['step_states_pkey'], 'step_states: the primary key only (every query reaches them by run)');
select is(array(select indexname::text from pg_indexes
                where schemaname = 'pgflow' and tablename = 'runs' order by indexname),
  array['idx_runs_flow_slug', 'idx_runs_restart_of_run_id', 'runs_pkey'],
  'runs: no index by status (no query reads runs by status alone)');
-- A task's claim changes status (queued -> started): the entries it writes are the primary
-- key's, the message key's and the running-task index's; its completion the first two. (Since
-- 0018 a limited flow's waiting or running task also has an entry in the gated index; other
-- tasks have none: it is partial on the gate, NULL for them. Since 0019 a keyed step's waiting
-- task has one in the held-keys index too, also partial.)
select is((select count(*)::int from pg_index i where i.indrelid = 'pgflow.step_tasks'::regclass), 7,
  'seven indexes on step_tasks (was nine; two hold only limited flows'' tasks, one only waiting tasks)');

select * from finish();
rollback;
