-- Since 0027 a failure may name the claim that started the failed attempt ("claim_id"): a
-- report from a superseded attempt (the task was requeued by stall recovery and claimed again)
-- changes nothing and returns the task's row as it is; the current claim's report fails the
-- task as usual; without claim_id nothing changed (upstream's fail_task has no fence); a
-- claim_id that is not a UUID string is refused (22023) naming the result, changing nothing.
begin;
select plan(9);
select pgflow.create_flow('f', max_attempts => 3, base_delay => 5, timeout => 60);
select pgflow.add_step('f', 's');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as msg from pgflow.step_tasks \gset

-- Claim a; its worker vanishes; stall recovery requeues the task; claim b takes it again.
select count(*) from pgflow.claim_tasks('f', 'f', array[:msg::bigint], '11111111-1111-1111-1111-111111111111',
                                        null, 'aaaaaaaa-0000-0000-0000-00000000000a');
update pgflow.step_tasks set queued_at = now() - interval '1 hour', started_at = now() - interval '1 hour';
select is(pgflow.requeue_stalled_tasks(), 1, 'stall recovery requeues the stalled attempt');
select count(*) from pgflow.claim_tasks('f', 'f', array[:msg::bigint], '11111111-1111-1111-1111-111111111111',
                                        null, 'bbbbbbbb-0000-0000-0000-00000000000b');
select results_eq($$select status, attempts_count, last_claim_id from pgflow.step_tasks$$,
                  $$values ('started', 2, 'bbbbbbbb-0000-0000-0000-00000000000b'::uuid)$$,
                  'claim b started the second attempt');

select results_eq(
  format($$select status, attempts_count, last_claim_id, error_message from pgflow.fail_tasks(jsonb_build_array(
    jsonb_build_object('run_id', %L, 'step_slug', 's', 'task_index', 0, 'error_message', 'late',
                       'claim_id', 'aaaaaaaa-0000-0000-0000-00000000000a')))$$, :'run'),
  $$values ('started', 2, 'bbbbbbbb-0000-0000-0000-00000000000b'::uuid, null::text)$$,
  'claim a''s late failure returns the task as it is');
select results_eq($$select status, attempts_count, last_claim_id, error_message from pgflow.step_tasks$$,
                  $$values ('started', 2, 'bbbbbbbb-0000-0000-0000-00000000000b'::uuid, null::text)$$,
                  'and changed nothing: still started under claim b, attempts unchanged');

select throws_ok(
  format($$select * from pgflow.fail_tasks(jsonb_build_array(
    jsonb_build_object('run_id', %1$L, 'step_slug', 's', 'task_index', 0, 'error_message', 'x',
                       'claim_id', 'bbbbbbbb-0000-0000-0000-00000000000b'),
    jsonb_build_object('run_id', %1$L, 'step_slug', 's', 'task_index', 1, 'error_message', 'y', 'claim_id', 'b')))$$, :'run'),
  '22023', 'fail_tasks(): result 2: "claim_id" must be a UUID string (the claim_id of claim_tasks) or null',
  'a claim_id that is not a UUID is refused, naming the result');
select throws_ok(
  format($$select * from pgflow.fail_tasks(jsonb_build_array(
    jsonb_build_object('run_id', %L, 'step_slug', 's', 'task_index', 0, 'error_message', 'x',
                       'claim_id', 42)))$$, :'run'),
  '22023', 'fail_tasks(): result 1: "claim_id" must be a UUID string (the claim_id of claim_tasks) or null',
  'so is one that is not a string');
select results_eq($$select status, attempts_count, error_message from pgflow.step_tasks$$,
                  $$values ('started', 2, null::text)$$, 'and neither changed anything');

select results_eq(
  format($$select status, attempts_count, error_message from pgflow.fail_tasks(jsonb_build_array(
    jsonb_build_object('run_id', %L, 'step_slug', 's', 'task_index', 0, 'error_message', 'current',
                       'claim_id', 'BBBBBBBB-0000-0000-0000-00000000000B')))$$, :'run'),
  $$values ('queued', 2, 'current')$$,
  'claim b''s failure (any case of the hex digits) is applied: queued again with its backoff');

-- Without claim_id (or with a JSON null) any started attempt fails, as before 0027.
select count(*) from pgflow.claim_tasks('f', 'f', array[:msg::bigint], '11111111-1111-1111-1111-111111111111',
                                        null, 'cccccccc-0000-0000-0000-00000000000c');
select results_eq(
  format($$select status, attempts_count, error_message from pgflow.fail_tasks(jsonb_build_array(
    jsonb_build_object('run_id', %L, 'step_slug', 's', 'task_index', 0, 'error_message', 'unfenced',
                       'claim_id', null)))$$, :'run'),
  $$values ('failed', 3, 'unfenced')$$,
  'a failure without a claim_id fails the started attempt (here the last: the task fails)');

select * from finish();
rollback;
