-- A given run_id is used; reusing it is a primary-key violation.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select is((select run_id from pgflow.start_flow('sequential', '{}', '00000000-0000-0000-0000-0000000000aa')),
          '00000000-0000-0000-0000-0000000000aa'::uuid, 'the run has the given id');
select is((select count(*) from pgflow.step_states where run_id = '00000000-0000-0000-0000-0000000000aa'),
          3::bigint, 'its step states use it');
select pgflow_tests.throws_like($$select pgflow.start_flow('sequential', '{}', '00000000-0000-0000-0000-0000000000aa')$$,
                 '23505', 'Run id 00000000-0000-0000-0000-0000000000aa is taken: a run of flow "sequential" started with it at %; start with another id, or read that run (a repeated start finds its first)',
                 'the same run_id cannot start twice, and the error says which id is taken by what');

select * from finish();
rollback;
