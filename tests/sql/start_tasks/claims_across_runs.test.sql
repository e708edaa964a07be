-- One claim may take tasks of several runs and steps; rows come back in message id order.
begin;
select plan(2);

select pgflow_tests.setup_flow('two_roots');
select run_id as r1 from pgflow.start_flow('two_roots', '{"run": 1}') \gset
select run_id as r2 from pgflow.start_flow('two_roots', '{"run": 2}') \gset
select pgflow_tests.ensure_worker('two_roots');

select results_eq(
  $$select run_id, step_slug, msg_id, flow_input->>'run' from pgflow.start_tasks('two_roots',
      array(select message_id from pgflow.step_tasks order by message_id desc), '11111111-1111-1111-1111-111111111111')$$,
  format($$values (%1$L::uuid, 'root_a'::text, 1::bigint, '1'::text), (%1$L, 'root_b', 2, '1'),
                  (%2$L, 'root_a', 3, '2'), (%2$L, 'root_b', 4, '2')$$, :'r1', :'r2'),
  'four tasks of two runs, in message order, each with its own run input');
select is((select count(*) from pgflow.step_tasks where status = 'started'), 4::bigint, 'all four started');

select * from finish();
rollback;
