-- Included by the tests of this folder (\i): queue "alt" and pg_temp.move_to_alt(step, index
-- [, run]),
-- which moves a task's message to "alt" (a copy of its body sent there, the original deleted)
-- and points the task's snapshot (queue_name, message_id) at the copy. Returns the new id.
-- Every PGMQ operation on that task must then use "alt", never the flow's queue.
select pgmq.create('alt');
create function pg_temp.move_to_alt(p_step text, p_index int default 0, p_run uuid default null) returns bigint
language plpgsql as $$
declare
  v_task pgflow.step_tasks;
  v_body jsonb;
  v_new bigint;
begin
  select * into strict v_task from pgflow.step_tasks t
  where t.step_slug = p_step and t.task_index = p_index and (p_run is null or t.run_id = p_run);
  execute format('select message from pgmq.%I where msg_id = $1', 'q_' || v_task.queue_name)
    into strict v_body using v_task.message_id;
  select s.id into v_new from pgmq.send('alt', v_body) s(id);
  perform pgmq.delete(v_task.queue_name, v_task.message_id);
  update pgflow.step_tasks t set queue_name = 'alt', message_id = v_new
  where t.run_id = v_task.run_id and t.step_slug = p_step and t.task_index = p_index;
  return v_new;
end $$;
