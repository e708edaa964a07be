-- complete_task returns the violating task row: failed, with failed_at, the offending output
-- kept and '[TYPE_VIOLATION] Produced <type> instead of array'.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status, output, error_message, (failed_at is not null), completed_at
                    from pgflow_tests.complete_step_task((select run_id from pgflow.runs), 'list', 0, '{"a": 1}')$$,
                  $$values ('failed', '{"a": 1}'::jsonb, '[TYPE_VIOLATION] Produced object instead of array', true, null::timestamptz)$$,
                  'the returned row');
select results_eq($$select status, output, error_message from pgflow.step_tasks$$,
                  $$values ('failed', '{"a": 1}'::jsonb, '[TYPE_VIOLATION] Produced object instead of array')$$,
                  'the stored row matches');

select * from finish();
rollback;
