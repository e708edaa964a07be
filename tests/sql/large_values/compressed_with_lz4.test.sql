-- The columns that carry a flow's data are compressed with lz4 where the server has it, and
-- keep PostgreSQL's default (pglz) where it does not (since 0024, sql/schema/0100_compression.sql);
-- an output stored through complete_task is compressed with that method.
begin;
select plan(2);

create temp table method as
select case when exists (select 1 from pg_settings s
                         where s.name = 'default_toast_compression' and 'lz4' = any (s.enumvals))
            then 'l' else '' end as code,
       case when exists (select 1 from pg_settings s
                         where s.name = 'default_toast_compression' and 'lz4' = any (s.enumvals))
            then 'lz4' else 'pglz' end as name;

select is(
  (select jsonb_object_agg(a.attrelid::regclass::text || '.' || a.attname::text, a.attcompression::text)
   from pg_attribute a
   where a.attrelid in ('pgflow.runs'::regclass, 'pgflow.step_states'::regclass,
                        'pgflow.step_tasks'::regclass, 'pgflow.signals'::regclass)
     and a.attnum > 0 and not a.attisdropped and a.attcompression <> ''),
  (select jsonb_object_agg(c, m.code)
   from unnest(array['pgflow.runs.input', 'pgflow.runs.output', 'pgflow.signals.payload',
                     'pgflow.step_states.output', 'pgflow.step_tasks.output']) c, method m
   where m.code <> ''),
  'runs.input, runs.output, step_states.output, step_tasks.output and signals.payload use lz4 (if the server has it), nothing else');

select pgflow.create_flow('z');
select pgflow.add_step('z', 'only');
select pgflow_tests.ensure_worker('z');
select run_id as run from pgflow.start_flow('z', '{}') \gset
select count(*) from pgflow.start_tasks('z', array(select message_id from pgflow.step_tasks),
                                        '11111111-1111-1111-1111-111111111111');
select count(*) from pgflow.complete_task(:'run', 'only', 0, jsonb_build_object('s', repeat('abc', 10000)));
select results_eq(
  $$select pg_column_compression(t.output), pg_column_compression(ss.output), pg_column_compression(r.output)
    from pgflow.step_tasks t join pgflow.step_states ss using (run_id, step_slug) join pgflow.runs r using (run_id)$$,
  $$select name, name, name from method$$,
  'a stored output is compressed with that method in the task, the step and the run');

select * from finish();
rollback;
