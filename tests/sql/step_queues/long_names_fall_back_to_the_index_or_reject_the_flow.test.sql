-- A step queue name longer than 47 characters falls back to flow__<step index>; when even that
-- does not fit, the whole flow is rejected with an error naming the flow, the step and the
-- limit, and nothing is created. A flow without steps cannot use step queues.
begin;
select plan(6);

-- 40 + 2 + 5 = 47: readable; 40 + 2 + 7 = 49: index.
select is(pgflow_tests.compile_step_flow('deliveryRoutingAndSchedulingFlowVersion2', jsonb_build_array(
            pgflow_tests.step_shape('fetch'), pgflow_tests.step_shape('fetches', array['fetch'])))->'routes',
          '[{"stepSlug": "fetch", "queueName": "deliveryroutingandschedulingflowversion2__fetch"},
            {"stepSlug": "fetches", "queueName": "deliveryroutingandschedulingflowversion2__1"}]'::jsonb,
          'a name over 47 characters falls back to the step index');
select ok(exists (select 1 from pgmq.meta where queue_name = 'deliveryroutingandschedulingflowversion2__1'),
          'and that queue exists');

select throws_ok($$select pgflow_tests.compile_step_flow('ccccccccccccccccccccccccccccccccccccccccccccc',
                     jsonb_build_array(pgflow_tests.step_shape('x')))$$,
                 '42622',
                 'Flow "ccccccccccccccccccccccccccccccccccccccccccccc" cannot use step queues: the private queue of step "x" (index 0) would be "ccccccccccccccccccccccccccccccccccccccccccccc__x" or "ccccccccccccccccccccccccccccccccccccccccccccc__0", longer than PGMQ''s 47 characters either way; shorten the flow slug',
                 'a flow whose step queue cannot fit is rejected whole');
select is((select count(*) from pgflow.flows where flow_slug like 'ccc%'), 0::bigint, 'nothing of it was written');

select throws_ok($$select pgflow_tests.compile_step_flow('empty', '[]')$$, '22023',
                 'Flow "empty" has no steps, so it cannot use step queues (queue mode step needs at least one step)',
                 'an empty flow cannot use step queues');
select is((select count(*) from pgmq.meta), 2::bigint, 'no queue was created for the refused flows');

select * from finish();
rollback;
