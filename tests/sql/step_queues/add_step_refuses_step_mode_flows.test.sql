-- A step-queued flow is compiled whole by its workers (every step's queue is provisioned with the
-- definition), so add_step refuses it, even for a step it already has, and so does add_wait_step;
-- plain flows are unchanged.
begin;
select plan(5);

select pgflow_tests.compile_step_flow('whole', jsonb_build_array(pgflow_tests.step_shape('a')));
select throws_ok($$select pgflow.add_step('whole', 'b', array['a'])$$, '0A000',
                 'Flow "whole" has one queue per step (queue mode step): its workers compile it whole, so add_step cannot change it. Deploy a new flow version instead',
                 'a new step is refused');
select throws_ok($$select pgflow.add_step('whole', 'a')$$, '0A000', 'Flow "whole" has one queue per step (queue mode step): its workers compile it whole, so add_step cannot change it. Deploy a new flow version instead', 'so is an identical re-call');
select throws_ok($$select pgflow.add_wait_step('whole', 'w', '{"kind": "signal"}', array['a'])$$, '0A000',
                 'Flow "whole" has one queue per step (queue mode step): its workers compile it whole, so add_wait_step cannot change it. Deploy a new flow version instead',
                 'a new wait step is refused too');
select is((select count(*) from pgflow.steps where flow_slug = 'whole'), 1::bigint, 'nothing was added');

select pgflow.create_flow('handmade');
select is((pgflow.add_step('handmade', 'a')).queue_name, 'handmade', 'a plain flow still gets steps by hand');

select * from finish();
rollback;
