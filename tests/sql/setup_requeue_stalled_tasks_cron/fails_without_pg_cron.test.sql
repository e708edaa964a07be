-- Without pg_cron the function fails with a clear message (C++ workers run stall recovery).
begin;
select plan(1);

select throws_ok($$select pgflow.setup_requeue_stalled_tasks_cron()$$, '0A000',
  'pg_cron is not installed in this database; C++ workers run stall recovery themselves, or install pg_cron first',
  'feature_not_supported when there is no cron schema');

select * from finish();
rollback;
