-- A single step feeding a map must produce an array: an object, string, number or boolean
-- fails the run, and the map's task count stays unknown.
begin;
select plan(5);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');

select pgflow.start_flow('f', to_jsonb(o)) from (values ('{"a": 1}'::jsonb), ('"text"'), ('5'), ('true')) v(o) \g /dev/null
select pgflow_tests.complete_step_task(run_id, 'list', 0, input) from pgflow.runs \g /dev/null

select results_eq($$select r.input, r.status from pgflow.runs r order by r.input::text$$,
                  $$values ('"text"'::jsonb, 'failed'), ('5', 'failed'), ('true', 'failed'), ('{"a": 1}', 'failed')$$,
                  'every run failed');
select is((select count(*)::int from pgflow.step_states where step_slug = 'each' and initial_tasks is null and status = 'created'), 4,
          'each stays created with unknown size');
select results_eq($$select distinct error_message from pgflow.step_tasks order by 1$$,
                  $$values ('[TYPE_VIOLATION] Produced boolean instead of array'), ('[TYPE_VIOLATION] Produced number instead of array'),
                           ('[TYPE_VIOLATION] Produced object instead of array'), ('[TYPE_VIOLATION] Produced string instead of array')$$,
                  'the task error names the type produced');
select is((select count(*)::int from pgmq.q_f), 0, 'no message left in the queue');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'each'), 0, 'no map task was created');

select * from finish();
rollback;
