-- Step slugs are unique ignoring case within a flow: add_step of a slug that differs from an
-- existing step of the flow only in case fails and changes nothing; the same spelling in
-- another flow is fine; exact spellings are kept.
begin;
select plan(6);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'fetchUser');

select throws_ok($$select pgflow.add_step('f', 'FetchUser')$$, '23505',
  'Step slug "FetchUser" differs only in case from step "fetchUser" of flow "f"; step slugs must be unique ignoring case',
  'add_step(FetchUser) is rejected');
select throws_ok($$select pgflow.add_step('f', 'fetchuser', array['fetchUser'])$$, '23505', 'Step slug "fetchuser" differs only in case from step "fetchUser" of flow "f"; step slugs must be unique ignoring case',
  'add_step(fetchuser) is rejected (whatever its dependencies)');
select results_eq($$select step_slug, step_index from pgflow.steps where flow_slug = 'f'$$,
                  $$values ('fetchUser'::text, 0)$$, 'one step, spelled exactly as added');
select pgflow.create_flow('g');
select lives_ok($$select pgflow.add_step('g', 'FETCHUSER')$$, 'another flow may use the same slug in any case');
select is((select step_slug from pgflow.steps where flow_slug = 'g'), 'FETCHUSER', 'kept as spelled');
select results_eq($$select step_slug from pgflow.add_step('f', 'fetchUser')$$, $$values ('fetchUser'::text)$$,
                  'add_step(fetchUser) again is an idempotent re-call');

select * from finish();
rollback;
