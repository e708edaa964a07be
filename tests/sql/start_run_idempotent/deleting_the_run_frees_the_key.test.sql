-- Pruning a run (sql/contrib/prune_data_older_than.sql) deletes its key: the next start with
-- that key creates a new run. Deleting a flow (delete_flow_and_data) deletes its runs' keys.
-- Runs started without a key are pruned as before.
begin;
select plan(5);
\i ../../../sql/contrib/prune_data_older_than.sql

select pgflow_tests.setup_flow('sequential');
select run_id as old_run from pgflow.start_run_idempotent('sequential', '{}', 'order-1') \gset
select pgflow.start_run('sequential', '{}') as unkeyed_run \gset
select pgflow.cancel_run(:'old_run');
select pgflow.cancel_run(:'unkeyed_run');
update pgflow.runs set started_at = started_at - interval '30 days', failed_at = failed_at - interval '29 days';
select pgflow.prune_data_older_than(interval '7 days');
select is((select count(*) from pgflow.runs), 0::bigint, '(both ended runs were pruned)');
select is((select count(*) from pgflow.run_idempotency_keys), 0::bigint, 'and the key with its run');
select run_id as new_run, created as new_created from pgflow.start_run_idempotent('sequential', '{}', 'order-1') \gset
select ok(:'new_created'::boolean and :'new_run'::uuid <> :'old_run'::uuid,
          'the key is free again: a new run is created');

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow.start_run_idempotent('greetUser', '{}', 'order-1');
select pgflow.delete_flow_and_data('greetUserV1', p_remove_alias => true);
select is((select array_agg(flow_alias) from pgflow.run_idempotency_keys), array['sequential'],
          'deleting a flow deletes its runs'' keys');
select is((select created from pgflow.start_run_by_slug('sequential', '{}') s
           cross join lateral pgflow.start_run_idempotent('sequential', '{}', 'order-1')), false,
          '(the live key still holds)');

select * from finish();
rollback;
