-- A paused worker function claims nothing (since 0026): its running workers stop taking work as
-- `pgflow workers pause` says. Their claim returns no row, as for an empty queue; the messages
-- they read are visible again at once; the tasks stay queued, unattempted. Another function's
-- worker on the same queue still claims, a look (has_visible_work) tells a paused worker there
-- is nothing, and once the function is resumed its workers claim again.
begin;
select plan(9);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'other', 'f', 'f', pgflow.worker_protocol());
select pgflow.start_flow('f', '{}') from generate_series(1, 3);
select pgflow._pause_worker_function('fn', 'operator: bad release');

select is_empty($$select * from pgflow.claim_tasks('f', 'f', array(select msg_id from pgmq.read('f', 30, 10)),
                                                   '11111111-1111-1111-1111-111111111111', null, gen_random_uuid())$$,
                'a paused function''s worker claims nothing, and is told of nothing');
select is((select count(*) from pgmq.q_f where vt <= clock_timestamp() and read_ct = 1), 3::bigint,
          'the messages it read are visible again at once');
select results_eq($$select status, attempts_count, last_worker_id from pgflow.step_tasks$$,
                  $$values ('queued'::text, 0, null::uuid), ('queued', 0, null), ('queued', 0, null)$$,
                  'the tasks stay queued, unattempted');
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false,
          'a look tells the paused function''s worker there is nothing');
select is(pgflow.has_visible_work('22222222-2222-2222-2222-222222222222'), true,
          'and another function''s worker what there is');
select is((select count(*) from pgflow.claim_tasks('f', 'f', array(select msg_id from pgmq.read('f', 30, 1)),
                                                   '22222222-2222-2222-2222-222222222222', null, gen_random_uuid())
           where outcome = 'claimed'), 1::bigint,
          'another function''s worker on the same queue still claims');
select is_empty($$select * from pgflow.claim_tasks('f', 'f', array(select msg_id from pgmq.read('f', 30, 10)),
                                                   '11111111-1111-1111-1111-111111111111')$$,
                'the claim without a claim id (protocols 4 and 5) claims nothing either');

select pgflow.resume_worker_function('fn');
select is((select count(*) from pgflow.claim_tasks('f', 'f', array(select msg_id from pgmq.read('f', 30, 10)),
                                                   '11111111-1111-1111-1111-111111111111', null, gen_random_uuid())
           where outcome = 'claimed'), 2::bigint,
          'resumed, its worker claims what is left');
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false,
          'and a look then finds the queue empty of visible work');

select * from finish();
rollback;
