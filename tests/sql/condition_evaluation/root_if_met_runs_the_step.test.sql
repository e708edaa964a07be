-- A root step's `if` (required_input_pattern) is tested against the run input with @>: when
-- the input contains the pattern the step starts normally.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'premium', required_input_pattern => '{"plan": "premium"}');
select run_id as run from pgflow.start_flow('f', '{"plan": "premium", "user": 7}') \gset

select results_eq($$select status, skip_reason from pgflow.step_states$$, $$values ('started', null::text)$$,
                  'the step started');
select is((select count(*)::int from pgflow.step_tasks), 1, 'with its task');
select is((select count(*)::int from pgmq.q_f), 1, 'and its message');

select * from finish();
rollback;
