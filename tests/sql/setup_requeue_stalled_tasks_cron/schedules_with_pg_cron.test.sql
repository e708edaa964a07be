-- With pg_cron (a stub cron schema here), the function (re)schedules job
-- pgflow_requeue_stalled_tasks to run requeue_stalled_tasks() and says so.
begin;
select plan(6);

create schema cron;
create table cron.job (jobid bigserial primary key, jobname text unique, schedule text, command text);
-- Like pg_cron: schedule returns the job id; unschedule of an unknown job raises.
create function cron.schedule(job_name text, schedule text, command text) returns bigint
language sql as $$
  insert into cron.job (jobname, schedule, command) values (job_name, schedule, command) returning jobid
$$;
create function cron.unschedule(job_name text) returns boolean
language plpgsql as $$
begin
  delete from cron.job where jobname = job_name;
  if not found then
    raise exception 'could not find valid entry for job ''%''', job_name;
  end if;
  return true;
end $$;

select pgflow.setup_requeue_stalled_tasks_cron() as msg \gset
select is(:'msg',
          format('Scheduled pgflow_requeue_stalled_tasks (every 15 seconds, job_id=%s)',
                 (select jobid from cron.job)),
          'first call (nothing to unschedule): schedules every 15 seconds and reports the job id');
select results_eq($$select jobname, schedule, command from cron.job$$,
                  $$values ('pgflow_requeue_stalled_tasks'::text, '15 seconds'::text, 'select pgflow.requeue_stalled_tasks()'::text)$$,
                  'the job runs requeue_stalled_tasks()');

select jobid as old_job from cron.job \gset
select is(pgflow.setup_requeue_stalled_tasks_cron('30 seconds'),
          format('Scheduled pgflow_requeue_stalled_tasks (every 30 seconds, job_id=%s)', :old_job + 1),
          'a second call with another interval replaces the job');
select results_eq($$select jobid, schedule from cron.job$$, format($$values (%s::bigint, '30 seconds'::text)$$, :old_job + 1),
                  'one job, with the new interval');
select ok((select prosecdef from pg_proc where oid = 'pgflow.setup_requeue_stalled_tasks_cron(text)'::regprocedure),
          'SECURITY DEFINER (as upstream)');
select is((select proconfig from pg_proc where oid = 'pgflow.setup_requeue_stalled_tasks_cron(text)'::regprocedure),
          array['search_path=pg_catalog, pg_temp'], 'with a fixed search_path (pg_temp last)');

select * from finish();
rollback;
