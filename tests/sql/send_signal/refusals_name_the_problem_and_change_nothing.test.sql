-- A signal that cannot be taken is refused with an error that names the problem, and changes
-- nothing: no signal is kept and the run is as it was.
begin;
select plan(17);

select pgflow_tests.setup_wait_flow('approval');
select pgflow.create_flow('napping');
select pgflow.add_wait_step('napping', 'nap', '{"kind": "sleep", "seconds": 3600}');
select pgflow.create_flow('fanout');
select pgflow.add_wait_step('fanout', 'list', '{"kind": "signal"}');
select pgflow.add_step('fanout', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('approval', '{}') \gset
select run_id as nap_run from pgflow.start_flow('napping', '{}') \gset
select run_id as fan_run from pgflow.start_flow('fanout', '{}') \gset

select throws_ok($$select pgflow.send_signal(null, 'approve', 's')$$, '22004',
                 'send_signal needs a run_id, a step_slug, a signal_id and a task_index', 'a missing argument');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', '')$$, :'run'), '22023',
                 'Signal id must have 1 to 255 characters, not 0', 'an empty signal id');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', repeat('x', 256))$$, :'run'), '22023',
                 'Signal id must have 1 to 255 characters, not 256', 'a signal id too long');
select throws_ok($$select pgflow.send_signal('00000000-0000-0000-0000-000000000000', 'approve', 's')$$, 'P0002',
                 'Run "00000000-0000-0000-0000-000000000000" does not exist', 'an unknown run');
select throws_ok(format($$select pgflow.send_signal(%L, 'aprove', 's')$$, :'run'), 'P0002',
                 format('Flow "approval" of run "%s" has no step "aprove"', :'run'), 'an unknown step');
select throws_ok(format($$select pgflow.send_signal(%L, 'draft', 's')$$, :'run'), '22023',
                 'Step "draft" of flow "approval" does not wait for a signal (it has a handler)', 'a step with a handler');
select throws_ok(format($$select pgflow.send_signal(%L, 'nap', 's')$$, :'nap_run'), '22023',
                 'Step "nap" of flow "napping" does not wait for a signal (it sleeps)', 'a sleep');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 's', '1', 1)$$, :'run'), '22023',
                 'Task index 1 is not a task of single step "approve" (a single step has task 0 only)', 'a task index beyond a single step');
select throws_ok(format($$select pgflow.send_signal(%L, 'list', 's', '{"not": "an array"}')$$, :'fan_run'), '22023',
                 'Step "list" feeds map step "each", so its signal''s payload must be a JSON array, not object',
                 'a payload a map''s size cannot come from (the run would fail)');
select is((select status from pgflow.runs where run_id = :'fan_run'), 'started', '(that run goes on waiting)');

select is(pgflow.send_signal(:'run', 'approve', 'first', '"yes"'), 'buffered', '(a buffered signal)');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'second', '"no"')$$, :'run'), '55000',
                 format('Step "approve" of run "%s" already has a buffered signal: this one is refused', :'run'),
                 'a second buffered signal for one task (no signal id is named: they are the senders'' data)');

select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'second', '"no"')$$, :'run'), '55000',
                 format('Step "approve" of run "%s" is completed: the signal is refused', :'run'),
                 'a signal for a step that completed');
select pgflow_tests.complete_step_task(:'run', 'publish', 0, '"p"');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'late', '"no"')$$, :'run'), '55000',
                 format('Run "%s" is completed: the signal for step "approve" of run "%s" is refused', :'run', :'run'),
                 'a signal for a run that completed');

select is(array(select signal_id from pgflow.signals order by signal_id), array['first'],
          'only the signal that was taken is kept');

-- The buffer is bounded: 1,000 signals per run.
select pgflow.create_flow('many');
select pgflow.add_step('many', 'list');
select pgflow.add_wait_step('many', 'each', '{"kind": "signal"}', array['list'], 'map');
select run_id as many_run from pgflow.start_flow('many', '{}') \gset
select count(pgflow.send_signal(:'many_run', 'each', 'sig', to_jsonb(i), i)) from generate_series(0, 999) i;
select throws_ok(format($$select pgflow.send_signal(%L, 'each', 'sig', '1', 1000)$$, :'many_run'), '55000',
                 format('Run "%s" has 1000 buffered signals, the most it keeps: the signal for step "each" task 1000 of run "%s" is refused',
                        :'many_run', :'many_run'),
                 'the 1,001st buffered signal of a run');
select is((select count(*)::int from pgflow.signals where run_id = :'many_run'), 1000, 'the first 1,000 are kept');

select * from finish();
rollback;
