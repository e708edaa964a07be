-- A permanently stalled task follows its step's when_exhausted: with skip the step is skipped
-- (handler_failed), its dependents run without it and the run can complete.
begin;
select plan(5);

select pgflow.create_flow('s', timeout => 1, max_attempts => 1);
select pgflow.add_step('s', 'flaky', when_exhausted => 'skip');
select pgflow.add_step('s', 'after', array['flaky']);
select pgflow.add_step('s', 'cascading', when_exhausted => 'skip-cascade');
select pgflow.add_step('s', 'never', array['cascading']);
select run_id as run from pgflow.start_flow('s', '{}') \gset
select pgflow_tests.ensure_worker('s');
select count(*) from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';

select is(pgflow.requeue_stalled_tasks(), 0, 'nothing requeued');
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('after'::text, 'started'::text, null::text), ('cascading', 'skipped', 'handler_failed'),
                           ('flaky', 'skipped', 'handler_failed'), ('never', 'skipped', 'dependency_skipped')$$,
                  'skip: the step is skipped and its dependent starts; skip-cascade: the dependent is skipped too');
select is((select status from pgflow.runs), 'started', 'the run goes on');

select count(*) from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks where step_slug = 'after'),
                                        '11111111-1111-1111-1111-111111111111');
select pgflow.complete_task(:'run', 'after', 0, '"done"');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed'::text, '{"after": "done"}'::jsonb)$$,
                  'the run completes');
select is((select count(*) from pgflow.step_tasks where permanently_stalled_at is not null), 2::bigint,
          'both stalled tasks are marked permanently stalled');

select * from finish();
rollback;
