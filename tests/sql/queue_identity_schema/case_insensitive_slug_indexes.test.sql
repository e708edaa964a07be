-- Case-insensitive slug uniqueness is enforced by unique indexes on lower(flow_slug) and
-- (flow_slug, lower(step_slug)); a flow slug fits a PGMQ queue name (at most 47 characters).
begin;
select plan(5);

select is((select indexdef from pg_indexes where schemaname = 'pgflow' and indexname = 'flows_flow_slug_lower_key'),
  'CREATE UNIQUE INDEX flows_flow_slug_lower_key ON pgflow.flows USING btree (lower(flow_slug))',
  'flows: unique index on lower(flow_slug)');
select is((select indexdef from pg_indexes where schemaname = 'pgflow' and indexname = 'steps_step_slug_lower_key'),
  'CREATE UNIQUE INDEX steps_step_slug_lower_key ON pgflow.steps USING btree (flow_slug, lower(step_slug))',
  'steps: unique index on (flow_slug, lower(step_slug))');
select is((select pg_get_constraintdef(oid) from pg_constraint
           where conrelid = 'pgflow.flows'::regclass and conname = 'flow_slug_fits_queue_name'),
  'CHECK ((length(flow_slug) <= 47))', 'flows: check flow_slug_fits_queue_name (at most 47 characters)');
select col_is_pk('pgflow', 'flows', 'flow_slug', 'the exact flow slug stays the primary key');
select col_is_pk('pgflow', 'steps', array['flow_slug', 'step_slug'], 'the exact (flow, step) stays the primary key');

select * from finish();
rollback;
