-- The claim boundary of a step-queued flow takes an exact step selector: required in queue mode
-- step (and the exact flow/step/queue route must exist), refused in mode flow. A step worker is
-- registered on its step's private queue and claims that step's tasks; a run moves from queue to
-- queue as its steps become ready.
begin;
select plan(11);

select pgflow_tests.compile_step_flow('relay', jsonb_build_array(
  pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first'])));
select pgflow.ensure_flow_compiled('plain', jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('only'))), pgflow.worker_protocol());
select (pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'relay-first-worker', 'relay',
                               'relay__first', pgflow.worker_protocol())).queue_name as first_queue \gset
select is(:'first_queue'::text, 'relay__first', 'a step worker registers on its step''s private queue');
select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'relay-second-worker', 'relay',
                              'relay__second', pgflow.worker_protocol());
select pgflow.register_worker('33333333-3333-3333-3333-333333333333', 'plain-worker', 'plain', 'plain',
                              pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('relay', '{"n": 1}') \gset

select throws_ok($$select * from pgflow.claim_tasks('relay__first', 'relay', '{1}', '11111111-1111-1111-1111-111111111111')$$,
                 '22023', 'Flow "relay" has one queue per step: a claim must name its step (claim_tasks(..., step_slug))',
                 'step mode: a claim without a step is refused');
select throws_ok($$select * from pgflow.claim_tasks('relay__first', 'relay', '{1}', '11111111-1111-1111-1111-111111111111', 'second')$$,
                 '22023', 'Queue "relay__first" is not the queue of step "second" of flow "relay"',
                 'step mode: the step must own the queue');
select throws_ok($$select * from pgflow.claim_tasks('plain', 'plain', '{1}', '33333333-3333-3333-3333-333333333333', 'only')$$,
                 '22023', 'Flow "plain" has one queue for all its steps: a claim names no step (got "only")',
                 'flow mode: a step selector is refused');
select throws_ok($$select * from pgflow.start_tasks('relay', '{1}', '11111111-1111-1111-1111-111111111111')$$,
                 '22023', 'Worker 11111111-1111-1111-1111-111111111111 is registered for queue "relay__first", not "relay"', 'the 0.16.0 signature cannot claim from a step-queued flow');

select results_eq($$select outcome, step_slug, input, flow_input
                    from pgflow.claim_tasks('relay__first', 'relay',
                                            array(select msg_id from pgmq.read('relay__first', 30, 10)),
                                            '11111111-1111-1111-1111-111111111111', 'first')$$,
                  $$values ('claimed'::text, 'first'::text, '{}'::jsonb, '{"n": 1}'::jsonb)$$,
                  'the first step''s worker claims its task from its queue');
select is((pgflow_tests.queue_counts('relay__second')).active, 0::bigint, 'nothing is in the second queue yet');
select pgflow.complete_task(:'run', 'first', 0, '{"ok": true}');
select is((select queue_name from pgflow.step_tasks where run_id = :'run' and step_slug = 'second'),
          'relay__second', 'the dependent step''s task snapshots its own queue');
select results_eq($$select outcome, step_slug, input
                    from pgflow.claim_tasks('relay__second', 'relay',
                                            array(select msg_id from pgmq.read('relay__second', 30, 10)),
                                            '22222222-2222-2222-2222-222222222222', 'second')$$,
                  $$values ('claimed'::text, 'second'::text, '{"first": {"ok": true}}'::jsonb)$$,
                  'the second step''s worker claims it from the second queue');
select pgflow.complete_task(:'run', 'second', 0, '"done"');
select is((select status from pgflow.runs where run_id = :'run'), 'completed', 'the run completes');
select is(((pgflow_tests.queue_counts('relay__first')).archived, (pgflow_tests.queue_counts('relay__second')).archived),
          (1::bigint, 1::bigint), 'each message was archived in its own queue');

select * from finish();
rollback;
