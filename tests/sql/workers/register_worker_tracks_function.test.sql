-- Since 0002 the 0.16.0 track_worker_function(name) refuses (protocol error) and writes
-- nothing; register_worker tracks the function instead: it upserts a worker_functions row and
-- bumps updated_at, never sets last_invoked_at and never changes enabled or debounce.
begin;
select plan(7);

select throws_ok($$select pgflow.track_worker_function('fn_a')$$, '0A000', 'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
                 'track_worker_function(name) refuses with a protocol error');
select is((select count(*) from pgflow.worker_functions), 0::bigint, 'and writes no row');

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                   pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn_a', 'f', 'f', pgflow.worker_protocol());
select results_eq($$select function_name, enabled, debounce, last_invoked_at from pgflow.worker_functions$$,
                  $$values ('fn_a'::text, true, '6 seconds'::interval, null::timestamptz)$$,
                  'a new row with the defaults');
select ok((select updated_at > now() and created_at = now() from pgflow.worker_functions),
          'updated_at is the call time (clock_timestamp), created_at the transaction time');

update pgflow.worker_functions set enabled = false, debounce = '10 seconds', updated_at = now() - interval '1 day';
select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn_a', 'f', 'f', pgflow.worker_protocol());
select results_eq($$select count(*), bool_and(enabled), min(debounce), min(last_invoked_at) from pgflow.worker_functions$$,
                  $$values (1::bigint, false, '10 seconds'::interval, null::timestamptz)$$,
                  'a second registration keeps one row with its settings');
select ok((select updated_at > now() from pgflow.worker_functions), 'and bumps updated_at');
select pgflow.register_worker('33333333-3333-3333-3333-333333333333', 'fn_b', 'f', 'f', pgflow.worker_protocol());
select is((select count(*) from pgflow.worker_functions), 2::bigint, 'another function gets its own row');

select * from finish();
rollback;
