-- A claim hides each message for its step's effective timeout (step, else flow) + 2 s, counted
-- from the claim (checked against clock readings taken just before and after it).
begin;
select plan(4);

select pgflow.create_flow('v', timeout => 20);
select pgflow.add_step('v', 'inherits');
select pgflow.add_step('v', 'own', timeout => 50);
select pgflow.add_step('v', 'each', step_type => 'map', timeout => 5);
select pgflow.start_flow('v', '[1, 2]');
select pgflow_tests.ensure_worker('v');
-- The worker's read hides them briefly; the claim sets the real visibility.
select count(*) from pgmq.read('v', 1, 10);
select clock_timestamp() as t0 \gset
select count(*) from pgflow.start_tasks('v', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
select clock_timestamp() as t1 \gset

create temp table vt as
select t.step_slug, q.vt from pgflow.step_tasks t join pgmq.q_v q on q.msg_id = t.message_id;
select ok((select vt between :'t0'::timestamptz + interval '22 s' and :'t1'::timestamptz + interval '22 s'
           from vt where step_slug = 'inherits'),
          'flow timeout 20 s: hidden for 22 s');
select ok((select vt between :'t0'::timestamptz + interval '52 s' and :'t1'::timestamptz + interval '52 s'
           from vt where step_slug = 'own'),
          'step timeout 50 s: hidden for 52 s');
select ok((select bool_and(vt between :'t0'::timestamptz + interval '7 s' and :'t1'::timestamptz + interval '7 s')
           from vt where step_slug = 'each'),
          'map step timeout 5 s: each message hidden for 7 s');
select is((select count(*) from vt where vt > :'t1'::timestamptz), 4::bigint, 'all four messages are hidden');

select * from finish();
rollback;
