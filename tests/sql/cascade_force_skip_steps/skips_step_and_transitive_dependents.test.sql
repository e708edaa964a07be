-- _cascade_force_skip_steps skips the given step with the given reason and every transitive
-- dependent with dependency_skipped (skipped_at set, remaining_tasks NULL), and returns how
-- many steps it skipped. Steps outside the subtree are untouched.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', array['a']);
select pgflow.add_step('f', 'c', array['b']);
select pgflow.add_step('f', 'd', array['a', 'x_root']) from (select pgflow.add_step('f', 'x_root')) s;
select pgflow.add_step('f', 'x_child', array['x_root']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select is(pgflow._cascade_force_skip_steps(:'run', 'a', 'handler_failed'), 4, 'returns 4 (a, b, c, d)');
select results_eq($$select step_slug, status, skip_reason, (skipped_at is not null), remaining_tasks
                    from pgflow.step_states order by step_slug$$,
                  $$values ('a', 'skipped', 'handler_failed', true, null::int),
                           ('b', 'skipped', 'dependency_skipped', true, null),
                           ('c', 'skipped', 'dependency_skipped', true, null),
                           ('d', 'skipped', 'dependency_skipped', true, null),
                           ('x_child', 'created', null, false, null),
                           ('x_root', 'started', null, false, 1)$$,
                  'the subtree of a is skipped (d through its dependency on a); x_* untouched');
select is((select remaining_steps from pgflow.runs), 2, 'remaining_steps 6 -> 2');
select results_eq($$select status from pgflow.runs$$, $$values ('started')$$, 'the run goes on');

select * from finish();
rollback;
