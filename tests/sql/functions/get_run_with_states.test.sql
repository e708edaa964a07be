-- get_run_with_states returns {"run": <runs row>, "steps": [<step_states rows in step order>]},
-- and NULL for an unknown run.
begin;
select plan(5);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{"a": 1}') \gset
select pgflow_tests.poll_and_complete('sequential');

select is(pgflow.get_run_with_states(:'run')->'run',
          (select to_jsonb(r) from pgflow.runs r where r.run_id = :'run'), 'run is the runs row as JSON');
select is(pgflow.get_run_with_states(:'run')->'steps',
          (select jsonb_agg(to_jsonb(ss) order by s.step_index) from pgflow.step_states ss
           join pgflow.steps s using (flow_slug, step_slug) where ss.run_id = :'run'),
          'steps are the step_states rows as JSON, in step order');
select is((select array_agg(e->>'step_slug' || ':' || (e->>'status'))
           from jsonb_array_elements(pgflow.get_run_with_states(:'run')->'steps') e),
          array['first:completed', 'second:started', 'last:created'], 'their current statuses');
select is(pgflow.get_run_with_states('00000000-0000-0000-0000-000000000000'), null::jsonb, 'unknown run: NULL');
select ok((select prosecdef from pg_proc where oid = 'pgflow.get_run_with_states(uuid)'::regprocedure),
          'SECURITY DEFINER (as upstream)');

select * from finish();
rollback;
