-- A malformed batch is refused as a whole before anything is locked or changed, naming the
-- problem and the position of the first bad result; an empty batch is fine and does nothing.
begin;
select plan(10);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a');
create temp table before as select to_jsonb(t) as task from pgflow.step_tasks t;

select throws_ok($$select pgflow.complete_tasks('{"run_id": "x"}')$$, '22023',
  'complete_tasks(): results must be a JSON array of {run_id, step_slug, task_index, output}, not object',
  'an object instead of an array');
select throws_ok($$select pgflow.complete_tasks(null)$$, '22023',
  'complete_tasks(): results must be a JSON array of {run_id, step_slug, task_index, output}, not NULL',
  'NULL');
select throws_ok(format($$select pgflow.complete_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', 0, 'output', 1),
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'output', 1)))$$, :'run'), '22023',
  'complete_tasks(): result 2 is not an object with a string run_id, a string step_slug and a numeric task_index',
  'a result without task_index, after a good one: named by its position');
select throws_ok($$select pgflow.complete_tasks('[42]')$$, '22023',
  'complete_tasks(): result 1 is not an object with a string run_id, a string step_slug and a numeric task_index',
  'a result that is not an object');
select throws_ok(format($$select pgflow.complete_tasks(jsonb_build_array(
      jsonb_build_object('run_id', %1$L, 'step_slug', 'a', 'task_index', '0', 'output', 1)))$$, :'run'), '22023',
  'complete_tasks(): result 1 is not an object with a string run_id, a string step_slug and a numeric task_index',
  'a batch of one result (complete_task''s path) is checked alike: a task_index that is a string');
select throws_ok($$select pgflow.complete_tasks('[["run_id", "step_slug", "task_index"]]')$$, '22023',
  'complete_tasks(): result 1 is not an object with a string run_id, a string step_slug and a numeric task_index',
  'an array in place of a result object');
select throws_ok($$select pgflow.complete_tasks('[{"run_id": "nope", "step_slug": "a", "task_index": 0}]')$$, '22P02', 'invalid input syntax for type uuid: "nope"',
  'a run_id that is not a uuid');
select throws_ok($$select pgflow.fail_tasks('[{"run_id": 1, "step_slug": "a", "task_index": 0}]')$$, '22023',
  'fail_tasks(): result 1 is not an object with a string run_id, a string step_slug and a numeric task_index',
  'fail_tasks checks its batch the same way');
select is_empty($$select * from pgflow.complete_tasks('[]')$$, 'an empty batch returns nothing');
select results_eq($$select to_jsonb(t) from pgflow.step_tasks t$$, $$select task from before$$,
                  'and none of them changed the task');

select * from finish();
rollback;
