-- A flow slug that breaks the shared slug rules fails (check violation, constraint
-- slug_is_valid) with a message naming the slug and the rule; nothing is created.
begin;
select plan(8);

select throws_ok($$select pgflow.create_flow('1flow')$$, '23514',
  'Invalid flow slug "1flow": it starts with a digit',
  'a leading digit');
select throws_ok($$select pgflow.create_flow('my-flow')$$, '23514',
  'Invalid flow slug "my-flow": it may contain only ASCII letters, digits and underscores',
  'a hyphen');
select throws_ok($$select pgflow.create_flow('run')$$, '23514',
  'Invalid flow slug "run": it is the reserved word "run"',
  'the reserved word run');
select throws_ok($$select pgflow.create_flow('_flow')$$, '23514',
  'Invalid flow slug "_flow": it starts with an underscore',
  'a leading underscore (0002)');
select throws_ok($$select pgflow.create_flow('flow_')$$, '23514',
  'Invalid flow slug "flow_": it ends with an underscore',
  'a trailing underscore (0002)');
select throws_ok($$select pgflow.create_flow('my__flow')$$, '23514',
  'Invalid flow slug "my__flow": it contains a double underscore (reserved for generated queue names)',
  'a double underscore (0002)');

create temp table caught (constraint_name text);
do $$
declare
  v_constraint text;
begin
  perform pgflow.create_flow('1flow');
exception when check_violation then
  get stacked diagnostics v_constraint = constraint_name;
  insert into caught values (v_constraint);
end $$;
select is((select constraint_name from caught), 'slug_is_valid', 'the error names constraint slug_is_valid');
select is((select count(*) from pgflow.flows) + (select count(*) from pgmq.meta), 0::bigint,
          'no flow and no queue was created');

select * from finish();
rollback;
