-- A lost claim may not have ended, or even begun, when its worker gives it back (its query
-- still on its way to a server backend, or running there; since 0030). A release waits for a
-- claim in progress and then gives back what it started; a claim that begins after its release,
-- or waits for one, claims nothing and leaves its messages visible at once; a new claim id
-- claims them. Before 0030 the release found nothing and the claim's tasks waited for stall
-- recovery. (Setup is committed through dblink so every session sees it; the file runs in its
-- own database.)
begin;
select plan(17);

select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $q$do $d$ begin
  perform pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
  perform pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
  perform pgflow.start_flow('f', '{}');
  perform pgflow.start_flow('f', '{}');
end $d$ $q$);
select array_agg(message_id order by message_id) as msgs from pgflow.step_tasks \gset
select is((select released_claim_ids from pgflow.claim_fences where worker_id = '11111111-1111-1111-1111-111111111111'),
          '{}'::uuid[], 'registering a worker creates its claim fence');

select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select pid as a_pid from dblink('a', 'select pg_backend_pid()') as t(pid int) \gset
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset

-- 1. The claim is running (its transaction open) when its worker gives it back.
select dblink_exec('a', 'begin');
select is((select x from dblink('a', format($$select outcome from pgflow.claim_tasks('f', 'f', array[%s]::bigint[],
            '11111111-1111-1111-1111-111111111111', null, 'aaaaaaaa-0000-0000-0000-000000000001')$$, (:'msgs'::bigint[])[1]))
           as t(x text)), 'claimed', 'a claim takes the first task (its transaction stays open)');
select dblink_send_query('b', $$select pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000001')$$);
select ok(pgflow_tests.wait_for_lock(:b_pid), 'its release waits for the claim in progress');
select dblink_exec('a', 'commit');
select is((select n from dblink_get_result('b') as t(n int)), 1, 'and then gives back the task the claim started');
select * from dblink_get_result('b') as t(n int);
select results_eq(format($$select status, attempts_count, vt <= clock_timestamp()
                           from pgflow.step_tasks t join pgmq.q_f q on q.msg_id = t.message_id
                           where t.message_id = %s$$, (:'msgs'::bigint[])[1]),
                  $$values ('queued'::text, 0, true)$$,
                  'the task is queued again (attempt taken back), its message visible at once');

-- 2. The claim begins after its release: it claims nothing.
select is((select n from dblink('a', $$select pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000002')$$)
           as t(n int)), 0, 'a claim released before it began gives back nothing');
select is((select n from dblink('a', $$select count(*)::int from pgflow.claim_tasks('f', 'f',
             array(select m.msg_id from pgmq.read('f', 30, 10) m), '11111111-1111-1111-1111-111111111111', null,
             'aaaaaaaa-0000-0000-0000-000000000002')$$) as t(n int)), 0,
          'when it begins, with messages read, it claims nothing');
select results_eq($$select status, attempts_count from pgflow.step_tasks order by message_id$$,
                  $$values ('queued'::text, 0), ('queued'::text, 0)$$, 'both tasks are still queued');
select is((select count(*) from pgmq.q_f where vt > clock_timestamp()), 0::bigint,
          'and the messages it read are visible again at once');

-- 3. The claim reaches the fence while its release is still open: it waits, then claims nothing.
select dblink_exec('b', 'begin');
select * from dblink('b', $$select pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000003')$$) as t(n int);
select dblink_send_query('a', $$select count(*)::int from pgflow.claim_tasks('f', 'f',
  array(select m.msg_id from pgmq.read('f', 30, 10) m), '11111111-1111-1111-1111-111111111111', null,
  'aaaaaaaa-0000-0000-0000-000000000003')$$);
select ok(pgflow_tests.wait_for_lock(:a_pid), 'a claim whose release is not committed yet waits for it');
select dblink_exec('b', 'commit');
select is((select n from dblink_get_result('a') as t(n int)), 0, 'then claims nothing');
select * from dblink_get_result('a') as t(n int);

-- 4. The same under REPEATABLE READ: the release committed after the claim's snapshot.
select dblink_exec('a', 'begin isolation level repeatable read');
select * from dblink('a', 'select 1') as t(x int);  -- the snapshot
select dblink_exec('b', 'begin');
select * from dblink('b', $$select pgflow.release_claim('11111111-1111-1111-1111-111111111111', 'aaaaaaaa-0000-0000-0000-000000000004')$$) as t(n int);
select dblink_send_query('a', $$select count(*)::int from pgflow.claim_tasks('f', 'f',
  array(select m.msg_id from pgmq.read('f', 30, 10) m), '11111111-1111-1111-1111-111111111111', null,
  'aaaaaaaa-0000-0000-0000-000000000004')$$);
select ok(pgflow_tests.wait_for_lock(:a_pid), 'under REPEATABLE READ too, the claim waits for the release');
select dblink_exec('b', 'commit');
select * from dblink_get_result('a', false) as t(n int);
select ok(dblink_error_message('a') like '%could not serialize access due to concurrent update%',
          'and fails with a serialization failure (40001), claiming nothing');
select * from dblink_get_result('a', false) as t(n int);
select dblink_exec('a', 'rollback');

select is((select n from dblink('a', $$select count(*)::int from pgflow.claim_tasks('f', 'f',
             array(select m.msg_id from pgmq.read('f', 30, 10) m), '11111111-1111-1111-1111-111111111111', null,
             'aaaaaaaa-0000-0000-0000-000000000005') where outcome = 'claimed'$$) as t(n int)), 2,
          'the worker''s next try, with a new claim id, claims both tasks');

-- 5. The fence keeps a worker's last 100 released ids; a release outside READ COMMITTED and a
-- release for an unregistered worker change nothing.
select * from dblink('a', $$select count(pgflow.release_claim('11111111-1111-1111-1111-111111111111', gen_random_uuid()))
                            from generate_series(1, 100)$$) as t(n bigint);
select is((select cardinality(released_claim_ids) || ' ' || ('aaaaaaaa-0000-0000-0000-000000000004'::uuid = any(released_claim_ids))::text
           from pgflow.claim_fences), '100 false', 'the fence keeps the last 100 released ids');
select dblink_exec('b', 'begin isolation level repeatable read');
select pgflow_tests.throws_like($$select * from dblink('b', 'select pgflow.release_claim(''11111111-1111-1111-1111-111111111111'', gen_random_uuid())::text') as t(x text)$$,
                 '25000', '%release_claim() needs READ COMMITTED, not REPEATABLE READ%',
                 'a release outside READ COMMITTED is refused, naming the level (its snapshot would miss the claim''s tasks)');
select dblink_exec('b', 'rollback');
select is((select n from dblink('a', $$select pgflow.release_claim('99999999-1111-1111-1111-111111111111', gen_random_uuid())$$) as t(n int))
          || ' ' || (select count(*) from pgflow.claim_fences), '0 1',
          'releasing a claim of an unregistered worker gives back nothing and creates no fence');

select dblink_disconnect('a');
select dblink_disconnect('b');
select dblink_disconnect('setup');
select * from finish();
rollback;
