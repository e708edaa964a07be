-- A signal id already received for a task is a duplicate: acknowledged, and nothing changes,
-- whatever its payload - buffered, delivered, or after the run ended.
begin;
select plan(7);

select pgflow_tests.setup_wait_flow('approval');
select run_id as run from pgflow.start_flow('approval', '{}') \gset

select is(pgflow.send_signal(:'run', 'approve', 'hook-1', '"first"'), 'buffered', '(buffered)');
select is(pgflow.send_signal(:'run', 'approve', 'hook-1', '"second"'), 'duplicate', 'a resend of a buffered signal is a duplicate');
select is((select payload from pgflow.signals where run_id = :'run'), '"first"'::jsonb, 'the buffered payload is unchanged');

select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
select is(pgflow.send_signal(:'run', 'approve', 'hook-1', '"third"'), 'duplicate', 'a resend after it was delivered too');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'), '"first"'::jsonb,
          'the output is the first payload');
select pgflow_tests.complete_step_task(:'run', 'publish', 0, '"p"');
select is(pgflow.send_signal(:'run', 'approve', 'hook-1', '"fourth"'), 'duplicate', 'and after the run completed');
select is((select count(*)::int from pgflow.signals where run_id = :'run'), 1, 'one signal is kept');

select * from finish();
rollback;
