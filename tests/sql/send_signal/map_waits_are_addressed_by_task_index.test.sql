-- A map wait step waits once per element: each signal names its task index; the step
-- completes when every element has its signal, its output the payloads in task_index order.
begin;
select plan(9);

select pgflow_tests.setup_wait_flow('reviews', step_type => 'map');
select run_id as run from pgflow.start_flow('reviews', '{}') \gset

select is(pgflow.send_signal(:'run', 'approve', 'r-2', '"third"', 2), 'buffered',
          'a signal for an element of a map that has not started is buffered by its index');
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '["a", "b", "c"]');
select is(pgflow_tests.task_statuses(:'run'),
          array['approve/0: waiting', 'approve/1: waiting', 'approve/2: completed', 'draft/0: completed'],
          'three elements wait; the one with a buffered signal took it');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'r-3', '"x"', 3)$$, :'run'), '22023',
                 format('Task index 3 is not a task of map step "approve" of run "%s": it has 3 tasks', :'run'),
                 'an index beyond the map is refused');
select is(pgflow.send_signal(:'run', 'approve', 'r-0', '"first"', 0), 'delivered', 'element 0 gets its signal');
select throws_ok(format($$select pgflow.send_signal(%L, 'approve', 'r-0b', '"again"', 0)$$, :'run'), '55000',
                 format('Step "approve" task 0 of run "%s" is completed: the signal is refused', :'run'),
                 'a second signal for an element that completed is refused (naming no signal id)');
select is(pgflow.send_signal(:'run', 'approve', 'r-0', '"first"', 0), 'duplicate', 'a resend of its signal is a duplicate');
select is((select status from pgflow.step_states where run_id = :'run' and step_slug = 'approve'), 'started',
          'the step waits for its last element');
select is(pgflow.send_signal(:'run', 'approve', 'r-1', '"second"', 1), 'delivered', 'element 1 gets its signal');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'),
          '["first", "second", "third"]'::jsonb, 'the step completes with the payloads in task_index order');

select * from finish();
rollback;
