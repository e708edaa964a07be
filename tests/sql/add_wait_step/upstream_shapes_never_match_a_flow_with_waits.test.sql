-- The decision of docs/waiting.md, "The flow shape": a flow with waits has a "wait" on those
-- steps, which upstream's shapes never have. A worker whose shape lacks the wait (an upstream
-- worker, or an older build) gets a mismatch and changes nothing; a shape with the wait
-- compiles and verifies like any other.
begin;
select plan(7);

set local pgflow.local = 'off';
select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('draft'),
         pgflow_tests.step_shape('approve', array['draft'], wait => '{"kind": "signal", "timeout": 60}'),
         pgflow_tests.step_shape('publish', array['approve'])))::text as with_wait \gset
select jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('draft'),
         pgflow_tests.step_shape('approve', array['draft']),
         pgflow_tests.step_shape('publish', array['approve'])))::text as without_wait \gset

select is(pgflow.ensure_flow_compiled('approval', :'with_wait'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          'a shape with a wait step compiles');
select is((select wait from pgflow.steps where flow_slug = 'approval' and step_slug = 'approve'),
          '{"kind": "signal", "timeout": 60}'::jsonb, 'its wait is stored');
select is(pgflow.ensure_flow_compiled('approval', :'with_wait'::jsonb, pgflow.worker_protocol())->>'status', 'verified',
          'the same shape verifies');
select is(pgflow.ensure_flow_compiled('approval', :'without_wait'::jsonb, pgflow.worker_protocol())->'differences',
          jsonb_build_array('Step at index 1: wait differs ''<missing>'' vs ''{"kind": "signal", "timeout": 60}'''),
          'a shape without the wait (upstream''s) is a mismatch that names the wait');
select is((select wait from pgflow.steps where flow_slug = 'approval' and step_slug = 'approve'),
          '{"kind": "signal", "timeout": 60}'::jsonb, 'and changes nothing');
select throws_like(format($$select pgflow.ensure_flow_compiled('approval_bad', %L::jsonb, pgflow.worker_protocol())$$,
                          jsonb_build_object('steps', jsonb_build_array(
                            pgflow_tests.step_shape('approve', wait => '{"kind": "nap"}')))),
                   'Invalid wait of step "approve" in flow "approval_bad": its wait needs "kind": "signal" or "sleep"',
                   'a shape with an invalid wait is refused, naming the step');

select throws_ok($$select pgflow.ensure_flow_compiled('approval_bad', '{"steps": [{"slug": "approve", "stepType": "single", "dependencies": [], "wait": "signal"}]}', pgflow.worker_protocol())$$,
                 '22023', 'Invalid flow shape: step at index 0 has a "wait" that is not an object',
                 'a shape whose wait is not an object is refused before anything is written');

select * from finish();
rollback;
