-- mark_worker_stopped sets stopped_at of that worker only; an unknown worker is a no-op.
begin;
select plan(4);

select pgflow_tests.ensure_worker('q', '22222222-2222-2222-2222-222222222222');
select pgflow_tests.ensure_worker('q', '33333333-3333-3333-3333-333333333333');
select pgflow.mark_worker_stopped('22222222-2222-2222-2222-222222222222');

select ok((select stopped_at > now() from pgflow.workers where worker_id = '22222222-2222-2222-2222-222222222222'),
          'stopped_at is set to the call time');
select is((select stopped_at from pgflow.workers where worker_id = '33333333-3333-3333-3333-333333333333'),
          null::timestamptz, 'other workers are untouched');
select is((select deprecated_at from pgflow.workers where worker_id = '22222222-2222-2222-2222-222222222222'),
          null::timestamptz, 'stopping is not deprecating');
select lives_ok($$select pgflow.mark_worker_stopped('99999999-9999-9999-9999-999999999999')$$, 'unknown worker: no error');

select * from finish();
rollback;
