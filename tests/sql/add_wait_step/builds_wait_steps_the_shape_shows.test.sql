-- add_wait_step stores each valid wait as the step's "wait"; the flow shape shows it on the
-- wait step only, so a flow without waits keeps upstream's shape; a repeated call is idempotent
-- and a different wait for an existing step is refused.
begin;
select plan(9);

select pgflow.create_flow('waits');
select pgflow.add_step('waits', 'draft');
select is((pgflow.add_wait_step('waits', 'approve', '{"kind": "signal"}', array['draft'])).wait,
          '{"kind": "signal"}'::jsonb, 'a wait for a signal, for ever');
select is((pgflow.add_wait_step('waits', 'review', '{"kind": "signal", "timeout": 3600, "timeoutOutput": {"ok": false}}',
                                 array['draft'])).wait->>'timeout', '3600', 'with a timeout and a timeout output');
select is((pgflow.add_wait_step('waits', 'cool_off', '{"kind": "sleep", "seconds": 0}', array['draft'])).wait->>'kind',
          'sleep', 'a sleep for a number of seconds (0 too)');
select is((pgflow.add_wait_step('waits', 'ship_day', '{"kind": "sleep", "until": ["run", "ship_at"]}')).wait->'until',
          '["run", "ship_at"]'::jsonb, 'a sleep until a timestamp of the step''s input');
select is((pgflow.add_wait_step('waits', 'each', '{"kind": "signal"}', array['draft'], 'map')).step_type,
          'map', 'a map wait, one per element');

select is(array(select s->>'slug' from jsonb_array_elements(pgflow._get_flow_shape('waits')->'steps') s where s ? 'wait'),
          array['approve', 'review', 'cool_off', 'ship_day', 'each'],
          'the shape has a "wait" on the wait steps ...');
select is((select s from jsonb_array_elements(pgflow._get_flow_shape('waits')->'steps') s where s->>'slug' = 'draft'),
          pgflow_tests.step_shape('draft'), '... and the step with a handler is upstream''s step shape, key for key');

select is((pgflow.add_wait_step('waits', 'approve', '{"kind": "signal"}', array['draft'])).wait,
          '{"kind": "signal"}'::jsonb, 'adding the same wait step again changes nothing');
select throws_ok($$select pgflow.add_wait_step('waits', 'approve', '{"kind": "signal", "timeout": 5}', array['draft'])$$,
                 '23505', 'Step "approve" already exists in flow "waits" with a different definition; flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
                 'a different wait for an existing step is refused');

select * from finish();
rollback;
