-- A given run_id is used; reusing it is a primary-key violation.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select is((select run_id from pgflow.start_flow('sequential', '{}', '00000000-0000-0000-0000-0000000000aa')),
          '00000000-0000-0000-0000-0000000000aa'::uuid, 'the run has the given id');
select is((select count(*) from pgflow.step_states where run_id = '00000000-0000-0000-0000-0000000000aa'),
          3::bigint, 'its step states use it');
select throws_ok($$select pgflow.start_flow('sequential', '{}', '00000000-0000-0000-0000-0000000000aa')$$,
                 '23505', 'duplicate key value violates unique constraint "runs_pkey"', 'the same run_id cannot start twice');

select * from finish();
rollback;
