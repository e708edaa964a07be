-- start_flow inserts a started run with the input and remaining_steps = number of steps, and returns it.
begin;
select plan(4);

select pgflow_tests.setup_flow('sequential');
select results_eq(
  $$select flow_slug, status, input, output, remaining_steps, started_at = now(), completed_at, failed_at
    from pgflow.start_flow('sequential', '{"user": 42}')$$,
  $$values ('sequential'::text, 'started'::text, '{"user": 42}'::jsonb, null::jsonb, 3, true,
            null::timestamptz, null::timestamptz)$$,
  'returns the started run');
select is((select count(*) from pgflow.runs), 1::bigint, 'one run stored');
select isnt((select run_id from pgflow.runs), null, 'a run_id was generated');
select pgflow.start_flow('sequential', '{"user": 43}');
select is((select count(distinct run_id) from pgflow.runs), 2::bigint, 'each call creates a new run');

select * from finish();
rollback;
