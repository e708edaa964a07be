-- The claiming worker is recorded in last_worker_id; a worker must be registered first
-- (since 0002 claim_tasks checks the subscription before anything else).
begin;
select plan(4);

select pgflow_tests.setup_flow('two_roots');
select pgflow.start_flow('two_roots', '{}');
select pgflow_tests.ensure_worker('two_roots', '22222222-2222-2222-2222-222222222222');
select pgflow_tests.ensure_worker('two_roots', '33333333-3333-3333-3333-333333333333');

select throws_ok(
  $$select * from pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_a'),
                                     '99999999-9999-9999-9999-999999999999')$$,
  'P0002', 'Worker 99999999-9999-9999-9999-999999999999 is not registered (register_worker)',
  'an unregistered worker cannot claim');
select pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_a'),
                          '22222222-2222-2222-2222-222222222222');
select pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_b'),
                          '33333333-3333-3333-3333-333333333333');
select results_eq($$select step_slug, last_worker_id from pgflow.step_tasks order by step_slug$$,
                  $$values ('root_a'::text, '22222222-2222-2222-2222-222222222222'::uuid),
                           ('root_b', '33333333-3333-3333-3333-333333333333')$$,
                  'each task records the worker that claimed it');
delete from pgflow.workers where worker_id = '33333333-3333-3333-3333-333333333333';
select is((select last_worker_id from pgflow.step_tasks where step_slug = 'root_b'), null::uuid,
          'deleting a worker sets last_worker_id to NULL');
select is((select status from pgflow.step_tasks where step_slug = 'root_b'), 'started', 'the task itself is unchanged');

select * from finish();
rollback;
