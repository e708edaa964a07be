-- A step of an unknown flow fails steps_flow_slug_fkey; an invalid step slug fails steps_step_slug_check.
begin;
select plan(4);

select throws_ok($$select pgflow.add_step('nope', 's')$$, '23503',
  'insert or update on table "steps" violates foreign key constraint "steps_flow_slug_fkey"',
  'unknown flow');
select pgflow.create_flow('f');
select throws_ok($$select pgflow.add_step('f', '1st')$$, '23514',
  'new row for relation "steps" violates check constraint "steps_step_slug_check"',
  'a leading digit');
select throws_ok($$select pgflow.add_step('f', 'run')$$, '23514',
  'new row for relation "steps" violates check constraint "steps_step_slug_check"',
  'the reserved word run');
select throws_ok($$select pgflow.add_step('f', '')$$, '23514',
  'new row for relation "steps" violates check constraint "steps_step_slug_check"',
  'the empty string');

select * from finish();
rollback;
