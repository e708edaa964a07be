-- The hot paths call no SQL-language function of pgflow or of PGMQ (since 0016): such a
-- function with a SET clause, or a volatile one returning a set, is never inlined, so every
-- call parses and plans its body again (bench/README.md, "Where the server's CPU goes"). PL/pgSQL
-- keeps its plans for the session. Starting runs every way a client starts them (a map; a step
-- with a start delay), reading a run's state, claiming, completing, failing with a retry, a
-- heartbeat and cancelling, also of a limited flow with a concurrency key;
-- pg_stat_xact_user_functions counts this transaction's calls of every
-- function when track_functions = 'all' (compared with a snapshot taken before the work, so the
-- set-up's calls do not count). Not covered: worker protocols 4-5 (the claim_tasks overload
-- without a claim id and start_tasks, upstream's protocol, are SQL wrappers) and resume_run.
begin;
select plan(5);

select pgflow.create_flow('m', max_attempts => 2, base_delay => 0, timeout => 60);
select pgflow.add_step('m', 'items', step_type => 'map');
select pgflow.add_step('m', 'sum', array['items']);
select pgflow.add_step('m', 'later', array['sum'], start_delay => 5);
select pgflow_tests.ensure_worker('m');
select pgflow.ensure_flow_compiled('k', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('work'))),
         pgflow.worker_protocol(), 'flow', null, null,
         '{"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"], "weightPath": ["w"]}}')->>'status';

set local track_functions = 'all';
create temp table calls_before as
select funcid, calls from pg_stat_xact_user_functions;

select count(*) from (select pgflow.start_flow('m', '[1, 2, 3]') from generate_series(1, 3)) x;
select pgflow.start_flow_with_states('m', '[4]') is not null;
select pgflow.start_run('m', '[5]') is not null;
select count(*) from pgflow.start_flow_by_alias('m', '[6]');
select pgflow.get_run_with_states((select run_id from pgflow.runs limit 1)) is not null;
select pgflow.worker_heartbeat('11111111-1111-1111-1111-111111111111');
-- Every map task (12), claimed and completed in one batch: each run's sum is queued.
create temp table read_ids as select m.msg_id from pgmq.read('m', 60, 12) m;
select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,
                                      'task_index', c.task_index, 'output', c.task_index))
  from pgflow.claim_tasks('m', 'm', (select array_agg(msg_id) from read_ids),
                          '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c
  where c.outcome = 'claimed'));
-- Three sums claimed: two complete (their runs' delayed step starts), one fails and retries.
create temp table read_more as select m.msg_id from pgmq.read('m', 60, 3) m;
create temp table sums as
select c.run_id, c.step_slug, c.task_index
from pgflow.claim_tasks('m', 'm', (select array_agg(msg_id) from read_more),
                        '11111111-1111-1111-1111-111111111111', null, gen_random_uuid()) c
where c.outcome = 'claimed';
select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', s.run_id, 'step_slug', s.step_slug,
                                      'task_index', s.task_index, 'output', 1))
  from (select * from sums order by run_id limit 2) s));
select count(*) from pgflow.fail_tasks((
  select jsonb_agg(jsonb_build_object('run_id', t.run_id, 'step_slug', t.step_slug,
                                      'task_index', t.task_index, 'error_message', 'boom'))
  from pgflow.step_tasks t where t.flow_slug = 'm' and t.status = 'started'));
select count(*) from pgflow.cancel_run((select run_id from pgflow.runs where flow_slug = 'm' limit 1));
-- A limited flow with a concurrency key (since 0019): starts, and a cancellation that frees a
-- slot, admit (at each statement's end here: deferred triggers never fire in a rolled-back test).
set constraints all immediate;
select count(*) from (select pgflow.start_run('k', jsonb_build_object('tenant', i % 2, 'w', i)) from generate_series(1, 3) i) x;
select count(*) from pgflow.cancel_run((select run_id from pgflow.step_tasks where flow_slug = 'k' and gate = 'admitted'));
select is((select count(*)::int from pgflow.step_tasks where flow_slug = 'k' and gate = 'admitted' and status = 'queued'), 1,
  'the keyed flow admitted its next task');
-- The control: a SQL-language function called here is counted.
select pgflow.worker_protocol();

create temp table called as
select f.schemaname, f.funcname, l.lanname, f.calls - coalesce(b.calls, 0) as calls
from pg_stat_xact_user_functions f
join pg_proc p on p.oid = f.funcid join pg_language l on l.oid = p.prolang
left join calls_before b on b.funcid = f.funcid
where f.calls > coalesce(b.calls, 0);

select is_empty(
  $$select schemaname || '.' || funcname from called
    where lanname = 'sql' and schemaname in ('pgflow', 'pgmq') and funcname <> 'worker_protocol'$$,
  'no SQL-language function was called by a start, run state read, claim, completion, failure,
   heartbeat or cancellation');
select is((select calls::int from called where schemaname = 'pgflow' and funcname = 'worker_protocol'), 1,
  'the control: a call of a SQL-language function is counted');
select is((select sum(calls)::int from called where funcname = 'start_flow_by_slug'), 9,
  'the calls were counted (nine starts)');
select is((select count(*)::int from pgflow.step_tasks where flow_slug = 'm' and step_slug = 'later'), 2,
  'two delayed steps were started (their tasks'' messages wait 5 s)');

select * from finish();
rollback;
