-- A run's priority orders the admission of a limited flow's held tasks: highest first, then
-- oldest. Set in the start's transaction it is a start option; set later it reorders the
-- run's waiting tasks at once; a retry keeps it; 0 is the default (no row); an unknown run is
-- P0002, a NULL priority 22004. A flow without a limit admits at once: the column stays NULL.
-- One admission sends its tasks' messages in admission order (since 0022), so workers, which
-- read in message order, take the highest priority first.
begin;
select plan(12);
set constraints all immediate;

select pgflow.ensure_flow_compiled('ranked', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work', options => '{"maxAttempts": 1}'))), pgflow.worker_protocol(),
         'flow', null, null, '{"concurrencyLimit": 1}')->>'status';
create function pg_temp.admitted() returns text language sql as $$
  select string_agg(r.input->>'n', ',' order by r.input->>'n') from pgflow.step_tasks t join pgflow.runs r using (run_id)
  where t.flow_slug = 'ranked' and t.gate = 'admitted' and t.status in ('queued', 'started')
$$;
create function pg_temp.run_of(p_n int) returns uuid language sql as $$
  select run_id from pgflow.runs where flow_slug = 'ranked' and input->>'n' = p_n::text
$$;
create function pg_temp.finish(p_n int) returns void language plpgsql as $$
begin
  perform pgflow_tests.start_task(pg_temp.run_of(p_n), 'work');
  perform pgflow.complete_task(pg_temp.run_of(p_n), 'work', 0, '{}');
end;
$$;

select pgflow.start_run('ranked', jsonb_build_object('n', i)) from generate_series(1, 4) i;
select is(pg_temp.admitted(), '1', 'the oldest run holds the one slot');

select pgflow.set_run_priority(pg_temp.run_of(3), 5);
select is((select priority from pgflow.step_tasks where run_id = pg_temp.run_of(3)), 5,
          'a waiting task takes its run''s new priority at once');
select pg_temp.finish(1);
select is(pg_temp.admitted(), '3', 'when the slot frees, the higher priority goes before older runs');

-- As a start option: the start and its priority in one statement (one transaction).
select pgflow.set_run_priority(pgflow.start_run('ranked', '{"n": 5}'), 10);
select pg_temp.finish(3);
select is(pg_temp.admitted(), '5', 'a run started with priority 10 overtakes the waiting ones');
select is((select priority from pgflow.run_priorities where run_id = pg_temp.run_of(5)), 10, 'and it is recorded');

select pgflow.set_run_priority(pg_temp.run_of(4), -1);
select pg_temp.finish(5);
select is(pg_temp.admitted(), '2', 'a negative priority goes after the default');

-- A retry keeps the priority; 0 removes it.
select pgflow_tests.start_task(pg_temp.run_of(2), 'work');
select pgflow.fail_task(pg_temp.run_of(2), 'work', 0, 'boom');
select pgflow.set_run_priority(pg_temp.run_of(2), 7);
select pgflow.retry_run(pg_temp.run_of(2)) as retried \gset
select is((select priority from pgflow.run_priorities where run_id = :'retried'), 7, 'a retry keeps its run''s priority');
select is((select priority from pgflow.step_tasks where run_id = :'retried'), 7, 'and so do its tasks');
select pgflow.set_run_priority(:'retried', 0);
select is((select count(*) from pgflow.run_priorities where run_id = :'retried'), 0::bigint, 'priority 0 is the default: no row');

select pgflow_tests.throws_like($$select pgflow.set_run_priority('00000000-0000-0000-0000-000000000000', 1)$$,
                                'P0002', '%00000000-0000-0000-0000-000000000000%', 'an unknown run is P0002');
select pgflow_tests.throws_like(format($$select pgflow.set_run_priority(%L, null)$$, :'retried'),
                                '22004', 'set_run_priority(): priority must not be NULL%', 'a NULL priority is refused');

-- Three runs admitted together (a limit of 3; the admission deferred until all three wait, as
-- at a commit): messages in priority order.
select pgflow.ensure_flow_compiled('ordered', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work'))), pgflow.worker_protocol(), 'flow', null, null,
         '{"concurrencyLimit": 3}')->>'status';
set constraints all deferred;
select pgflow.set_run_priority(pgflow.start_run('ordered', jsonb_build_object('n', v.n)), v.p)
from (values (1, 1), (2, 3), (3, 2)) v(n, p);
set constraints all immediate;
select is(array(select r.input->>'n' from pgmq.read('ordered', 30, 3) m
                join pgflow.step_tasks t on t.queue_name = 'ordered' and t.message_id = m.msg_id
                join pgflow.runs r using (run_id) order by m.msg_id),
          array['2', '3', '1'], 'a read of one admission''s messages takes the highest priority first');

select * from finish();
rollback;
