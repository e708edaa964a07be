-- Upstream (before 0.15.1) could claim a task without hiding its message. Ours: if the
-- visibility update misses any claimed message, the whole claim fails and nothing is claimed.
-- Since 0002 start_tasks delegates to claim_tasks, which raises the error.
begin;
select plan(4);

select pgflow_tests.setup_flow('two_roots');
select pgflow.start_flow('two_roots', '{}');
select pgflow_tests.ensure_worker('two_roots');
-- The message of root_b disappears (deleted by hand) while its task is still queued.
select pgmq.delete('two_roots', (select message_id from pgflow.step_tasks where step_slug = 'root_b'));

select throws_ok(
  $$select * from pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks),
                                     '11111111-1111-1111-1111-111111111111')$$,
  'P0001', 'claim_tasks(): visibility updated 1 of 2 claimed messages', 'the claim fails');
select results_eq($$select step_slug, status, attempts_count, last_worker_id from pgflow.step_tasks order by step_slug$$,
                  $$values ('root_a'::text, 'queued'::text, 0, null::uuid), ('root_b', 'queued', 0, null)$$,
                  'neither task was claimed, not even the one whose message exists');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('root_a', 'two_roots')),
          'root_a''s message visibility was not changed');
select results_eq(
  $$select step_slug from pgflow.start_tasks('two_roots', array(select message_id from pgflow.step_tasks where step_slug = 'root_a'),
                                             '11111111-1111-1111-1111-111111111111')$$,
  $$values ('root_a'::text)$$, 'a claim of the intact message alone succeeds');

select * from finish();
rollback;
