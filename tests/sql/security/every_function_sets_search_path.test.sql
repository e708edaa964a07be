-- Every pgflow function pins its search_path (upstream left several without one) to exactly
-- `pg_catalog, pg_temp`: never '' (PostgreSQL then searches the caller's temporary schema FIRST
-- for type and relation names, so a caller's pg_temp.text would replace text inside the function;
-- definer_functions_ignore_the_callers_temporary_types shows the attack), and pg_temp last. So
-- does every function of the bundled PGMQ layer when it is the one installed (PGMQ's extension
-- sets none: its functions run with the pinned path of the pgflow function calling them). And
-- every function works for a caller whose search_path contains none of pgflow's schemas.
begin;
select plan(7);

select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace
                  and not exists (select 1 from unnest(p.proconfig) c where c like 'search_path=%')
                order by 1),
          '{}'::text[], 'no pgflow function without a search_path setting');
select ok((select count(*) > 30 from pg_proc where pronamespace = 'pgflow'::regnamespace),
          '(the check covered the whole API)');
select is(array(select p.oid::regprocedure::text from pg_proc p, unnest(p.proconfig) c
                where p.pronamespace = 'pgflow'::regnamespace and c like 'search_path=%'
                  and c <> 'search_path=pg_catalog, pg_temp'
                order by 1),
          '{}'::text[], 'each is exactly pg_catalog, then pg_temp');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgmq'::regnamespace
                  and case when exists (select 1 from pg_extension where extname = 'pgmq')
                           then p.proconfig is not null or p.prosecdef
                           else not coalesce('search_path=pg_catalog, pg_temp' = any(p.proconfig), false) end
                order by 1),
          '{}'::text[], 'bundled PGMQ: every function pinned the same way; PGMQ extension: none sets a path or runs as its owner');
select ok((select count(*) > 20 from pg_proc where pronamespace = 'pgmq'::regnamespace),
          '(the PGMQ check covered its API)');

create temp table outcome (error text);
do $$
begin
  set local search_path = pg_catalog;
  perform pgflow.create_flow('sp');
  perform pgflow.add_step('sp', 'a');
  perform pgflow.add_step('sp', 'b', array['a'], step_type => 'map');
  perform pgflow.start_flow('sp', '{}');
  perform pgflow_tests.ensure_worker('sp');
  perform pgflow.start_tasks('sp', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
  perform pgflow.complete_task(run_id, 'a', 0, '[1]') from pgflow.runs;
  perform pgflow.ensure_flow_compiled('sp', pgflow._get_flow_shape('sp'), pgflow.worker_protocol());
  perform pgflow.requeue_stalled_tasks();
  insert into pg_temp.outcome values (null);
exception when others then
  insert into pg_temp.outcome values (sqlerrm);
end $$;
reset search_path;
select is((select error from outcome), null, 'a run works for a caller with search_path = pg_catalog');
select is((select status from pgflow.step_states where step_slug = 'b'), 'started', '(and got as far as the map step)');

select * from finish();
rollback;
