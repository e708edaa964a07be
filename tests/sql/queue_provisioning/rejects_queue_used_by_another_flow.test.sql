-- A generated name already referenced by another concrete flow (here: another flow's task
-- snapshot) is not provisioned for a new flow.
begin;
select plan(3);

select pgflow.ensure_flow_compiled('first', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.start_flow('first', '{}');
update pgflow.step_tasks set queue_name = 'second';  -- a snapshot pointing at "second"

select pgflow.create_flow('second');
select throws_ok($$select pgflow.add_step('second', 'a')$$, '23505',
  'Queue "second" of flow "second" is already used by another flow', 'add_step refuses the referenced name');
select is((select count(*) from pgflow.steps where flow_slug = 'second'), 0::bigint, 'no step was added');
select is((select count(*) from pgmq.meta where queue_name = 'second'), 0::bigint, 'no queue was created');

select * from finish();
rollback;
