-- Upstream silently does nothing for an unknown flow; ours fails with P0002.
begin;
select plan(2);

select throws_ok($$select pgflow.delete_flow_and_data('nope')$$, 'P0002', 'Flow "nope" does not exist',
                 'an unknown flow is an error');
select pgmq.create('queue_only');
select throws_ok($$select pgflow.delete_flow_and_data('queue_only')$$, 'P0002', 'Flow "queue_only" does not exist',
                 'a bare queue with that name is not a flow');

select * from finish();
rollback;
