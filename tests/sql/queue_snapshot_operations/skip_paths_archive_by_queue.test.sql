-- An exhausted task of a when_exhausted = skip / skip-cascade map step terminates its sibling
-- tasks and archives their messages from each sibling's own queue snapshot, one batch per
-- queue: siblings moved to alt are archived there, the others in the flow's queue.
begin;
\i _move_to_alt.sql
select plan(10);

-- A flow: map "items" (4 tasks, one attempt, when_exhausted = mode) -> single "after".
-- Tasks 0 and 1 are claimed; 1 (started) and 2 (queued) are moved to alt; 0 and 3 stay.
create function pg_temp.setup(p_flow text, p_mode text) returns uuid language plpgsql as $$
declare
  v_run uuid;
begin
  perform pgflow.create_flow(p_flow, max_attempts => 1, timeout => 5);
  perform pgflow.add_step(p_flow, 'items', step_type => 'map', when_exhausted => p_mode);
  perform pgflow.add_step(p_flow, 'after', array['items']);
  select run_id into v_run from pgflow.start_flow(p_flow, '[1, 2, 3, 4]');
  perform pgflow_tests.start_task(v_run, 'items', 0);
  perform pgflow_tests.start_task(v_run, 'items', 1);
  perform pg_temp.move_to_alt('items', 1, v_run);
  perform pg_temp.move_to_alt('items', 2, v_run);
  return v_run;
end $$;

-- skip
select pg_temp.setup('f', 'skip') as run \gset
create temp table ids_f as select task_index, queue_name, message_id from pgflow.step_tasks where run_id = :'run';
select pgflow.fail_task(:'run', 'items', 0, 'boom');

select results_eq(format($$select task_index, status from pgflow.step_tasks where run_id = %L and step_slug = 'items' order by task_index$$, :'run'),
                  $$values (0, 'failed'::text), (1, 'skipped'), (2, 'skipped'), (3, 'skipped')$$,
                  'skip: the failed task''s siblings are skipped');
select set_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$,
              $$select message_id from ids_f where queue_name = 'alt'$$,
              'skip: the siblings in alt were archived from alt');
select set_eq($$select pgflow_tests.queue_msg_ids('f', true)$$,
              $$select message_id from ids_f where queue_name = 'f'$$,
              'skip: the failed task and the sibling in f were archived from f');
select is((pgflow_tests.queue_counts('alt')).active, 0::bigint, 'skip: alt has no active message left');
select results_eq(format($$select status from pgflow.step_states where run_id = %L and step_slug = 'after'$$, :'run'),
                  $$values ('started'::text)$$, 'skip: the dependent runs without it');

-- skip-cascade
delete from pgmq.a_alt;
select pg_temp.setup('g', 'skip-cascade') as run2 \gset
create temp table ids_g as select task_index, queue_name, message_id from pgflow.step_tasks where run_id = :'run2';
select pgflow.fail_task(:'run2', 'items', 0, 'boom');

select results_eq(format($$select task_index, status from pgflow.step_tasks where run_id = %L order by task_index$$, :'run2'),
                  $$values (0, 'failed'::text), (1, 'skipped'), (2, 'skipped'), (3, 'skipped')$$,
                  'skip-cascade: the siblings are skipped');
select set_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$,
              $$select message_id from ids_g where queue_name = 'alt'$$,
              'skip-cascade: the siblings in alt were archived from alt');
select set_eq($$select pgflow_tests.queue_msg_ids('g', true)$$,
              $$select message_id from ids_g where queue_name = 'g'$$,
              'skip-cascade: the others were archived from g');
select is((pgflow_tests.queue_counts('alt')).active + (pgflow_tests.queue_counts('g')).active, 0::bigint,
          'skip-cascade: no active message is left');
select results_eq(format($$select step_slug, status from pgflow.step_states where run_id = %L order by step_slug$$, :'run2'),
                  $$values ('after'::text, 'skipped'::text), ('items', 'skipped')$$,
                  'skip-cascade: the dependent is skipped too');

select * from finish();
rollback;
