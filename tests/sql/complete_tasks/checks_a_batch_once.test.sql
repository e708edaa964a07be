-- A batch is checked once (since 0025): a batch of one result by complete_tasks before it
-- hands the result to complete_task, any other batch by _task_results as it parses it. Counted
-- with the server's function statistics for this transaction (track_functions).
begin;
select plan(4);
set local track_functions = 'all';
select pgflow.create_flow('f');
select pgflow.add_step('f', 'm', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3, 4, 5]') \gset
select pgflow_tests.start_task(:'run', 'm', i) from generate_series(0, 4) i;

create function pg_temp.checks() returns bigint language sql as $$
  select coalesce(sum(f.calls), 0) from pg_stat_xact_user_functions f
  where f.schemaname = 'pgflow' and f.funcname = '_check_task_results'
$$;
create function pg_temp.result(p_run uuid, p_index int) returns jsonb language sql as $$
  select jsonb_build_object('run_id', p_run, 'step_slug', 'm', 'task_index', p_index, 'output', p_index)
$$;

select pgflow.complete_tasks(jsonb_build_array(pg_temp.result(:'run', 0)));
select is(pg_temp.checks(), 1::bigint, 'a batch of one result is checked once');
select pgflow.complete_tasks(jsonb_build_array(pg_temp.result(:'run', 1), pg_temp.result(:'run', 2)));
select is(pg_temp.checks(), 2::bigint, 'a batch of two results is checked once');
select pgflow.fail_tasks(jsonb_build_array(
  jsonb_build_object('run_id', :'run', 'step_slug', 'm', 'task_index', 3, 'error_message', 'x'),
  jsonb_build_object('run_id', :'run', 'step_slug', 'm', 'task_index', 4, 'error_message', 'x')));
select is(pg_temp.checks(), 3::bigint, 'fail_tasks checks its batch once');
select is((select count(*) from pgflow.step_tasks t where t.run_id = :'run' and t.status = 'completed'),
          3::bigint, 'and the checked results completed their tasks');

select * from finish();
rollback;
