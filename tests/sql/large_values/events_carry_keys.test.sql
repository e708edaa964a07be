-- Events carry keys, not rows (since 0024): no event function takes a row (or an array of
-- rows) of a pgflow table, which every caller would copy with its output or input; the
-- broadcast reads the row back when it sends it, so a large output stored out of line (TOAST)
-- is broadcast whole, from a single result (complete_task) and from a batch (complete_tasks).
begin;
select plan(5);

select is_empty(
  $$select p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
    from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'pgflow' and p.proname like '\_emit%'
      and exists (select 1 from unnest(p.proargtypes) a(t)
                  join pg_type ty on ty.oid = a.t
                  left join pg_type el on el.oid = ty.typelem and ty.typcategory = 'A'
                  where coalesce(el.typrelid, ty.typrelid) <> 0)$$,
  'no _emit function takes a row or an array of rows');

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('k');
select pgflow.add_step('k', 'big');
select pgflow_tests.ensure_worker('k');
-- 300 kB of md5 digests: pglz leaves it above the 2 kB at which PostgreSQL stores it out of line
create temp table big as
select jsonb_build_object('s', string_agg(md5(i::text), '')) as output from generate_series(1, 10000) i;
select run_id as one from pgflow.start_flow('k', '{}') \gset
select run_id as two from pgflow.start_flow('k', '{}') \gset
select run_id as three from pgflow.start_flow('k', '{}') \gset
select count(*) from pgflow.start_tasks('k', array(select message_id from pgflow.step_tasks),
                                        '11111111-1111-1111-1111-111111111111');

select count(*) from pgflow.complete_task(:'one', 'big', 0, (select output from big));
select count(*) from pgflow.complete_tasks((
  select jsonb_agg(jsonb_build_object('run_id', r, 'step_slug', 'big', 'task_index', 0,
                                      'output', (select output from big)))
  from unnest(array[:'two', :'three']::uuid[]) r));

select is((select count(*)::int from pgflow.runs where status = 'completed'), 3, 'the three runs completed');
select cmp_ok(
  (select (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %s', c.reltoastrelid::regclass),
                                               false, true, '')))[1]::text::int
   from pg_class c where c.oid = 'pgflow.step_states'::regclass),
  '>', 0, 'the step outputs are stored out of line (TOAST)');
select bag_eq(
  $$select m.payload->'output' from realtime.messages m where m.event = 'step:big:completed'$$,
  $$select output from big cross join generate_series(1, 3)$$,
  'each step:big:completed broadcast carries the whole output');
select bag_eq(
  $$select m.payload->'output' from realtime.messages m where m.event = 'run:completed'$$,
  $$select jsonb_build_object('big', output) from big cross join generate_series(1, 3)$$,
  'each run:completed broadcast carries the whole run output');

select * from finish();
rollback;
