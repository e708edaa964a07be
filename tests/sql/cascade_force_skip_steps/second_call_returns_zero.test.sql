-- Calling it again for an already skipped subtree skips nothing, returns 0 and leaves the
-- counters and reasons alone.
begin;
select plan(3);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is(pgflow._cascade_force_skip_steps(:'run', 'second', 'condition_unmet'), 2, 'first call skips 2');
select is(pgflow._cascade_force_skip_steps(:'run', 'second', 'handler_failed'), 0, 'second call returns 0');
select results_eq($$select step_slug, skip_reason from pgflow.step_states where status = 'skipped' order by step_slug$$,
                  $$values ('last', 'dependency_skipped'), ('second', 'condition_unmet')$$,
                  'reasons from the first call stay');

select * from finish();
rollback;
