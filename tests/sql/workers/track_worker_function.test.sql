-- track_worker_function upserts a worker_functions row and bumps updated_at; it never sets
-- last_invoked_at and never changes enabled or debounce.
begin;
select plan(5);

select pgflow.track_worker_function('fn_a');
select results_eq($$select function_name, enabled, debounce, last_invoked_at from pgflow.worker_functions$$,
                  $$values ('fn_a'::text, true, '6 seconds'::interval, null::timestamptz)$$,
                  'a new row with the defaults');
select ok((select updated_at > now() and created_at = now() from pgflow.worker_functions),
          'updated_at is the call time (clock_timestamp), created_at the transaction time');

update pgflow.worker_functions set enabled = false, debounce = '10 seconds', updated_at = now() - interval '1 day';
select pgflow.track_worker_function('fn_a');
select results_eq($$select count(*), bool_and(enabled), min(debounce), min(last_invoked_at) from pgflow.worker_functions$$,
                  $$values (1::bigint, false, '10 seconds'::interval, null::timestamptz)$$,
                  'a second call keeps one row with its settings');
select ok((select updated_at > now() from pgflow.worker_functions), 'and bumps updated_at');
select pgflow.track_worker_function('fn_b');
select is((select count(*) from pgflow.worker_functions), 2::bigint, 'another function gets its own row');

select * from finish();
rollback;
