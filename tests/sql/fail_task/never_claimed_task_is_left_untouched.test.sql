-- fail_task for a task that was never claimed changes nothing and does not touch its message
-- (no backoff, no archive).
begin;
select plan(3);
select pgflow.create_flow('f', base_delay => 10);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status, attempts_count, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'only', 0, 'stray')$$,
                  $$values ('queued', 0, null::text)$$, 'returns the untouched queued row');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('only', 'f')), 'its message is still visible');
select is((select count(*)::int from pgmq.a_f), 0, 'nothing was archived');

select * from finish();
rollback;
