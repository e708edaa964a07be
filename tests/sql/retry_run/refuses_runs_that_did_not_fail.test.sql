-- Only failed (or cancelled) runs are retried: a started or completed run is 55000, an unknown
-- run P0002; a refused retry starts nothing.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'only');
select run_id as started from pgflow.start_flow('f', '{}') \gset
select run_id as done from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'done', 'only', 0, '1') \g /dev/null

select throws_ok(format('select pgflow.retry_run(%L)', :'started'), '55000',
                 format('Run "%s" is started: only a failed or cancelled run can be retried', :'started'),
                 'a started run');
select throws_ok(format('select pgflow.retry_run(%L)', :'done'), '55000',
                 format('Run "%s" is completed: only a failed or cancelled run can be retried', :'done'),
                 'a completed run');
select throws_ok($$select pgflow.retry_run('00000000-0000-0000-0000-0000000000ff')$$, 'P0002',
                 'Run "00000000-0000-0000-0000-0000000000ff" does not exist', 'an unknown run');
select is((select count(*)::int from pgflow.runs), 2, 'no run was started');

select * from finish();
rollback;
