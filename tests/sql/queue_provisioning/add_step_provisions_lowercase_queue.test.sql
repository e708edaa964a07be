-- create_flow creates no queue; the first add_step provisions the flow's generated queue
-- lower(flow_slug) (pgmq.meta spelled in lowercase, both tables) and stores it as the step's
-- queue_name; later steps reuse it. A camelCase flow keeps its spelling.
begin;
select plan(9);

select pgflow.create_flow('camelFlow');
select is((select count(*) from pgmq.meta), 0::bigint, 'create_flow created no queue');

select is((select queue_name from pgflow.add_step('camelFlow', 'first')), 'camelflow',
          'add_step returns the step with queue_name = lower(flow_slug)');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('camelflow'::text)$$,
                  'the queue was provisioned, its pgmq.meta row spelled in lowercase');
select has_table('pgmq', 'q_camelflow', 'its message table exists');
select has_table('pgmq', 'a_camelflow', 'its archive table exists');

select pgflow.add_step('camelFlow', 'second', array['first']);
select results_eq($$select step_slug, queue_name from pgflow.steps order by step_index$$,
                  $$values ('first'::text, 'camelflow'::text), ('second', 'camelflow')$$,
                  'every step routes to the same queue');
select is((select count(*) from pgmq.meta), 1::bigint, 'the second step reused the queue');
select is((select flow_slug from pgflow.flows), 'camelFlow', 'the flow slug keeps its spelling');
select is((select step_slug from pgflow.steps where step_index = 0), 'first', 'step slugs keep theirs');

select * from finish();
rollback;
