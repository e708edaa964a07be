-- After a fatal claim pauses a worker function, a restarted worker of that function cannot
-- register: the error gives the reason and the operator command. resume_worker_function clears
-- the pause (unknown functions are an error) and registration works again.
begin;
select plan(8);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select s.id as orphan from pgmq.send('f', '{"flow_slug": "f", "step_slug": "a"}') s(id) \gset
select outcome from pgflow.claim_tasks('f', 'f', array[:orphan]::bigint[], '11111111-1111-1111-1111-111111111111');
select ok((select paused_at is not null from pgflow.worker_functions), '(the fatal claim paused fn)');

select pgflow_tests.throws_like($$select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn', 'f', 'f', pgflow.worker_protocol())$$,
  '55000', 'Worker function "fn" is paused since % (fatal claim on queue "f": unsupported message(s) ' || :orphan || '); fix the cause, then run: select pgflow.resume_worker_function(''fn'');',
  'a restarted worker is refused (object_not_in_prerequisite_state) with the reason and the resume command');
select is((select count(*) from pgflow.workers), 1::bigint, 'it was not registered');

select lives_ok($$select pgflow.resume_worker_function('fn')$$, 'the operator resumes the function');
select results_eq($$select paused_at, pause_reason from pgflow.worker_functions$$, $$values (null::timestamptz, null::text)$$,
                  'the pause is cleared');
select throws_ok($$select pgflow.resume_worker_function('nope')$$, 'P0002', 'Worker function "nope" does not exist',
                 'resuming an unknown function is an error');
select lives_ok($$select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn', 'f', 'f', pgflow.worker_protocol())$$,
                'the worker registers again');

-- The command in the message can be pasted whatever the function is called.
select pgflow.register_worker('33333333-3333-3333-3333-333333333333', $n$o'brien; drop table x --$n$, 'f', 'f', pgflow.worker_protocol());
select pgflow._pause_worker_function($n$o'brien; drop table x --$n$, 'by hand');
select pgflow_tests.throws_like($$select pgflow.register_worker('44444444-4444-4444-4444-444444444444', 'o''brien; drop table x --', 'f', 'f', pgflow.worker_protocol())$$,
  '55000', $m$Worker function "o'brien; drop table x --" is paused since % (by hand); fix the cause, then run: select pgflow.resume_worker_function('o''brien; drop table x --');$m$,
  'a name with a quote is quoted in the resume command');

select * from finish();
rollback;
