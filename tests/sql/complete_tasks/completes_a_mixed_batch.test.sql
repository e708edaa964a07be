-- One batch with results of three runs of two flows, in shuffled order: the tasks of a map
-- (its output in task_index order, not batch order), one-step runs that complete, and in the
-- middle a single step whose non-array output violates its dependent map's input. The
-- violating run fails alone; everything else completes; every reported message is archived.
begin;
select plan(8);
select pgflow.create_flow('m');
select pgflow.add_step('m', 'items', step_type => 'map');
select pgflow.create_flow('v');
select pgflow.add_step('v', 'list');
select pgflow.add_step('v', 'each', array['list'], step_type => 'map');
select run_id as map_run from pgflow.start_flow('m', '[1, 2, 3]') \gset
select run_id as bad_run from pgflow.start_flow('v', '{}') \gset
select run_id as other_map_run from pgflow.start_flow('m', '[7]') \gset
select count(*) from pgflow_tests.read_and_start('m', 30, 10);
select count(*) from pgflow_tests.read_and_start('v', 30, 10);

select results_eq(
  format($$select step_slug, task_index, status from pgflow.complete_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %1$L, 'step_slug', 'items', 'task_index', 2, 'output', 'c'),
      jsonb_build_object('run_id', %3$L, 'step_slug', 'items', 'task_index', 0, 'output', 'z'),
      jsonb_build_object('run_id', %2$L, 'step_slug', 'list', 'task_index', 0, 'output', jsonb_build_object('not', 'an array')),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'items', 'task_index', 0, 'output', 'a'),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'items', 'task_index', 1, 'output', 'b')))
    order by run_id = %2$L, step_slug, task_index, run_id = %1$L$$, :'map_run', :'bad_run', :'other_map_run'),
  $$values ('items', 0, 'completed'), ('items', 0, 'completed'), ('items', 1, 'completed'),
           ('items', 2, 'completed'), ('list', 0, 'failed')$$,
  'one row per result: the map tasks completed, the violating task failed');
select results_eq(format($$select status, output from pgflow.runs where run_id = %L$$, :'map_run'),
                  $$values ('completed', '{"items": ["a", "b", "c"]}'::jsonb)$$,
                  'the map run completed with its outputs in task_index order');
select results_eq(format($$select status, output from pgflow.runs where run_id = %L$$, :'other_map_run'),
                  $$values ('completed', '{"items": ["z"]}'::jsonb)$$, 'the other map run completed');
select results_eq(format($$select status from pgflow.runs where run_id = %L$$, :'bad_run'),
                  $$values ('failed')$$, 'the violating run failed');
select results_eq(format($$select status, error_message from pgflow.step_states where run_id = %L and step_slug = 'list'$$, :'bad_run'),
                  $$values ('failed', '[TYPE_VIOLATION] Map step each expects array input but dependency list produced object')$$,
                  'with the type violation on its step');
select results_eq(format($$select error_message from pgflow.step_tasks where run_id = %L$$, :'bad_run'),
                  $$values ('[TYPE_VIOLATION] Produced object instead of array')$$, 'and on its task');
select results_eq($$select active, archived from pgflow_tests.queue_counts('m')$$, $$values (0::bigint, 4::bigint)$$,
                  'every map message is archived');
select results_eq($$select active, archived from pgflow_tests.queue_counts('v')$$, $$values (0::bigint, 1::bigint)$$,
                  'the violating task''s message is archived');

select * from finish();
rollback;
