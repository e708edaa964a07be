-- The hot paths call no SQL-language function of pgflow or of PGMQ (since 0016): such a
-- function with a SET clause, or a volatile one returning a set, is never inlined, so every
-- call parses and plans its body again (bench/README.md, "Where the server's CPU goes"). PL/pgSQL
-- keeps its plans for the session. Starting runs every way a client starts them (with and
-- without a start delay, a map), reading a run's state, claiming, completing, failing with a
-- retry, a heartbeat and cancelling; pg_stat_xact_user_functions counts this transaction's calls
-- of every function when track_functions = 'all'.
begin;
select plan(2);

select pgflow.create_flow('m', max_attempts => 2, base_delay => 0, timeout => 60);
select pgflow.add_step('m', 'items', step_type => 'map');
select pgflow.add_step('m', 'sum', array['items']);
select pgflow.add_step('m', 'later', array['sum'], start_delay => 5);
select pgflow_tests.ensure_worker('m');

set local track_functions = 'all';
select count(*) from (select pgflow.start_flow('m', '[1, 2, 3]') from generate_series(1, 3)) x;
select pgflow.start_flow_with_states('m', '[4]') is not null;
select pgflow.start_run('m', '[5]') is not null;
select count(*) from pgflow.start_flow_by_alias('m', '[6]');
select pgflow.get_run_with_states((select run_id from pgflow.runs limit 1)) is not null;
select pgflow.worker_heartbeat('11111111-1111-1111-1111-111111111111');
create temp table read_ids as select m.msg_id from pgmq.read('m', 60, 12) m;
select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
                                      'task_index', c.task_index, 'output', c.task_index))
  from pgflow.claim_tasks('m', 'm', (select array_agg(msg_id) from read_ids),
                          '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c
  where c.outcome = 'claimed'));
create temp table read_more as select m.msg_id from pgmq.read('m', 60, 3) m;
select count(*) from pgflow.claim_tasks('m', 'm', (select array_agg(msg_id) from read_more),
                                        '11111111-1111-1111-1111-111111111111', null, gen_random_uuid());
select count(*) from pgflow.fail_tasks((
  select jsonb_agg(jsonb_build_object('run_id', t.run_id, 'step_slug', t.step_slug,
                                      'task_index', t.task_index, 'error_message', 'boom'))
  from pgflow.step_tasks t where t.flow_slug = 'm' and t.status = 'started'));
select count(*) from pgflow.cancel_run((select run_id from pgflow.runs where flow_slug = 'm' limit 1));

select is_empty(
  $$select f.schemaname || '.' || f.funcname from pg_stat_xact_user_functions f
    join pg_proc p on p.oid = f.funcid join pg_language l on l.oid = p.prolang
    where l.lanname = 'sql' and f.schemaname in ('pgflow', 'pgmq')
      and f.funcname <> 'read'  -- the test's own reads above (a worker's call, not pgflow's)$$,
  'no SQL-language function was called by a start, run state read, claim, completion, failure,
   heartbeat or cancellation');
select is((select sum(calls)::int from pg_stat_xact_user_functions where funcname = 'start_flow_by_slug'), 6,
  'the calls were counted (six starts)');

select * from finish();
rollback;
