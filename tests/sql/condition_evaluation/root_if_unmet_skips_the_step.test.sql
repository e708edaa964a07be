-- A root step whose `if` does not match the run input is skipped at start (when_unmet = skip,
-- the default): skip_reason condition_unmet, skipped_at, no task and no message; the run counts
-- it as done.
begin;
select plan(5);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'premium', required_input_pattern => '{"plan": "premium"}');
select pgflow.add_step('f', 'always');
select run_id as run from pgflow.start_flow('f', '{"plan": "free"}') \gset

select is((select when_unmet from pgflow.steps where step_slug = 'premium'), 'skip', 'skip is the default');
select results_eq($$select status, skip_reason, (skipped_at is not null), started_at, remaining_tasks
                    from pgflow.step_states where step_slug = 'premium'$$,
                  $$values ('skipped', 'condition_unmet', true, null::timestamptz, null::int)$$, 'skipped: condition_unmet');
select is_empty($$select 1 from pgflow.step_tasks where step_slug = 'premium'$$, 'no task');
select is((select count(*)::int from pgmq.q_f where message->>'step_slug' = 'premium'), 0, 'no message');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('started', 1)$$,
                  'remaining_steps counts the skip');

select * from finish();
rollback;
