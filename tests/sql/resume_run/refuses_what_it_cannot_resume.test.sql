-- resume_run refuses (55000) a started or completed run and a run whose flow was redefined
-- after it started (here: a step added), pointing at retry_run; an unknown run is P0002. A
-- refusal changes nothing.
begin;
select plan(5);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'only');
select run_id as started from pgflow.start_flow('f', '{}') \gset
select run_id as done from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'done', 'only', 0, '1') \g /dev/null
select run_id as failed from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'failed', 'only') \g /dev/null

select throws_ok(format('select pgflow.resume_run(%L)', :'started'), '55000',
                 format('Run "%s" is started: only a failed or cancelled run can be resumed', :'started'), 'a started run');
select throws_ok(format('select pgflow.resume_run(%L)', :'done'), '55000',
                 format('Run "%s" is completed: only a failed or cancelled run can be resumed', :'done'), 'a completed run');
select throws_ok($$select pgflow.resume_run('00000000-0000-0000-0000-0000000000ff')$$, 'P0002',
                 'Run "00000000-0000-0000-0000-0000000000ff" does not exist', 'an unknown run');
select pgflow.add_step('f', 'added_later');
select throws_ok(format('select pgflow.resume_run(%L)', :'failed'), '55000',
                 format('Run "%s" cannot be resumed: flow "f" was redefined after the run started', :'failed'),
                 'a run of a redefined flow');
select results_eq(format('select status, (select count(*)::int from pgflow.step_tasks t where t.run_id = r.run_id and t.status = %L) from pgflow.runs r where run_id = %L', 'failed', :'failed'),
                  $$values ('failed', 1)$$, 'the refused run is unchanged');

select * from finish();
rollback;
