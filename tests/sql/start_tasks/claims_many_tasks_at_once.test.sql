-- One claim of 1000 map tasks starts them all and returns each with its own element.
begin;
select plan(3);

select pgflow.create_flow('many');
select pgflow.add_step('many', 'each', step_type => 'map');
select pgflow.start_flow('many', (select jsonb_agg(jsonb_build_object('n', g)) from generate_series(0, 999) g));
select pgflow_tests.ensure_worker('many');

create temp table claimed as
select * from pgflow.start_tasks('many', array(select msg_id from pgmq.read('many', 30, 1000)),
                                 '11111111-1111-1111-1111-111111111111');
select is((select count(*) from claimed), 1000::bigint, '1000 records returned');
select is((select count(*) from claimed where (input->>'n')::int = task_index), 1000::bigint,
          'each carries the element at its task_index');
select is((select count(*) from pgflow.step_tasks where status = 'started' and attempts_count = 1), 1000::bigint,
          'all 1000 tasks are started');

select * from finish();
rollback;
