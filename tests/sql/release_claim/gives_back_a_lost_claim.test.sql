-- A claim made with a claim id (protocol 6) records it on the tasks it started; release_claim
-- with that id queues them again as if the claim had not happened (the attempt taken back,
-- the message visible at once and announced), leaves every other task alone (another claim's,
-- another worker's, one that moved on), and is idempotent. The claim without an id (protocols
-- 4 and 5) records none.
begin;
select plan(10);
select pgflow.create_flow('f', timeout => 60);
select pgflow.add_step('f', 'm', step_type => 'map');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '[1, 2, 3, 4]') \gset
select array_agg(message_id order by task_index) as msgs from pgflow.step_tasks \gset

-- Worker 1's lost claim takes tasks 0 and 1; worker 1 claims task 2 again later; worker 2 takes 3.
select count(*) from pgflow.claim_tasks('f', 'f', (:'msgs'::bigint[])[1:2], '11111111-1111-1111-1111-111111111111',
                                        null, 'aaaaaaaa-0000-0000-0000-000000000001');
select count(*) from pgflow.claim_tasks('f', 'f', (:'msgs'::bigint[])[3:3], '11111111-1111-1111-1111-111111111111',
                                        null, 'aaaaaaaa-0000-0000-0000-000000000002');
select count(*) from pgflow.claim_tasks('f', 'f', (:'msgs'::bigint[])[4:4], '22222222-2222-2222-2222-222222222222',
                                        null, 'aaaaaaaa-0000-0000-0000-000000000001');
select results_eq($$select task_index, last_claim_id from pgflow.step_tasks order by task_index$$,
                  $$values (0, 'aaaaaaaa-0000-0000-0000-000000000001'::uuid), (1, 'aaaaaaaa-0000-0000-0000-000000000001'),
                           (2, 'aaaaaaaa-0000-0000-0000-000000000002'), (3, 'aaaaaaaa-0000-0000-0000-000000000001')$$,
                  'each claimed task records the id of the claim that started it');
select pgflow.complete_task(:'run', 'm', 1, '"done"');

select is(pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000001'), 1,
          'releasing worker 1''s lost claim gives back its one task still started');
select results_eq($$select task_index, status, attempts_count, started_at, last_claim_id from pgflow.step_tasks order by task_index$$,
                  $$values (0, 'queued', 0, null::timestamptz, null::uuid),
                           (1, 'completed', 1, now(), 'aaaaaaaa-0000-0000-0000-000000000001'),
                           (2, 'started', 1, now(), 'aaaaaaaa-0000-0000-0000-000000000002'),
                           (3, 'started', 1, now(), 'aaaaaaaa-0000-0000-0000-000000000001')$$,
                  'it is queued as if never claimed (attempt taken back); the completed task, the other claim''s and the other worker''s are untouched');
select ok((select vt <= clock_timestamp() from pgmq.q_f where msg_id = (:'msgs'::bigint[])[1]),
          'its message is visible at once');
select results_eq($$select msg_id from pgmq.read('f', 30, 10)$$, format($$values (%s::bigint)$$, (:'msgs'::bigint[])[1]),
                  'and the next read finds it (and only it)');
select is(pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000001'), 0,
          'releasing it again gives back nothing');
select is(pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'bbbbbbbb-0000-0000-0000-000000000000'), 0,
          'a claim that started nothing (or never committed) gives back nothing');
select throws_ok($$select pgflow.release_claim(null, 'aaaaaaaa-0000-0000-0000-000000000001')$$, '22004',
                 'release_claim(): worker_id and claim_id must not be NULL', 'a NULL id is refused');

select pgflow.claim_tasks('f', 'f', array[(:'msgs'::bigint[])[1]], '11111111-1111-1111-1111-111111111111') \g /dev/null
select results_eq($$select status, attempts_count, last_claim_id from pgflow.step_tasks where task_index = 0$$,
                  $$values ('started', 1, null::uuid)$$,
                  'a claim without an id (protocols 4 and 5) starts the task and records no claim id');
select is((select has_function_privilege('public', 'pgflow.release_claim(uuid, uuid)', 'execute')), false,
          'PUBLIC may not call it (SECURITY DEFINER: granted to pgflow_worker by sql/contrib/grants.sql)');

select * from finish();
rollback;
