-- Prunable history is a run that completed or failed before the cutoff; started runs never are.
begin;
select plan(5);

create temp table r as select * from pgflow.runs limit 0;
insert into r (run_id, flow_slug, status, input, started_at, completed_at)
values (gen_random_uuid(), 'f', 'completed', '{}', now() - interval '3 days', now() - interval '2 days');

select is((select pgflow.run_ended_before(row(r.*)::pgflow.runs, now() - interval '1 day') from r), true, 'completed before the cutoff');
select is((select pgflow.run_ended_before(row(r.*)::pgflow.runs, now() - interval '3 days') from r), false, 'completed after the cutoff');
update r set status = 'failed', completed_at = null, failed_at = now() - interval '2 days';
select is((select pgflow.run_ended_before(row(r.*)::pgflow.runs, now() - interval '1 day') from r), true, 'failed (or cancelled) before the cutoff');
update r set status = 'started', failed_at = null;
select is((select pgflow.run_ended_before(row(r.*)::pgflow.runs, now()) from r), false, 'a started run never');
update r set started_at = now() - interval '1 year';
select is((select pgflow.run_ended_before(row(r.*)::pgflow.runs, now()) from r), false, '(however old)');

select * from finish();
rollback;
