-- A flow slug names the queue lower(flow_slug), and PGMQ queue names have at most 47
-- characters: a 48-character flow slug is rejected by create_flow, the compiler and a direct
-- INSERT; 47 characters work end to end.
begin;
select plan(6);

select throws_ok(format('select pgflow.create_flow(%L)', repeat('a', 48)), '23514',
  format('Flow slug "%s" is too long: its queue name must be at most 47 characters', repeat('a', 48)),
  'create_flow rejects 48 characters');
select throws_ok(format($$select pgflow.ensure_flow_compiled(%L, '{"steps": []}', pgflow.worker_protocol())$$, repeat('a', 48)),
  '23514', 'Flow slug "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" is too long: its queue name must be at most 47 characters', 'the compiler rejects 48 characters');
select throws_ok(format('insert into pgflow.flows (flow_slug, flow_alias) values (%L, ''x'')', repeat('a', 48)), '23514',
  'new row for relation "flows" violates check constraint "flow_slug_fits_queue_name"', 'a direct INSERT too');
select is((select count(*) from pgflow.flows) + (select count(*) from pgmq.meta), 0::bigint, 'nothing was created');

select lives_ok(format($$select pgflow.ensure_flow_compiled(%L, jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())$$,
                       'F' || repeat('a', 46)),
  'a 47-character flow compiles');
select results_eq($$select queue_name::text from pgmq.meta$$, array['f' || repeat('a', 46)],
                  'with its 47-character queue');

select * from finish();
rollback;
