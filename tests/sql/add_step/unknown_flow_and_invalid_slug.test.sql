-- A step of an unknown flow fails with a foreign-key error naming the flow; an invalid step
-- slug (under 0002's shared rules) fails with a check error naming the slug and the rule.
-- Neither creates a queue.
begin;
select plan(7);

select throws_ok($$select pgflow.add_step('nope', 's')$$, '23503',
  'Flow "nope" does not exist; create it with pgflow.create_flow() first',
  'unknown flow');
select pgflow.create_flow('f');
select throws_ok($$select pgflow.add_step('f', '1st')$$, '23514',
  'Invalid step slug "1st" in flow "f": it starts with a digit',
  'a leading digit');
select throws_ok($$select pgflow.add_step('f', 'run')$$, '23514',
  'Invalid step slug "run" in flow "f": it is the reserved word "run"',
  'the reserved word run');
select throws_ok($$select pgflow.add_step('f', '')$$, '23514',
  'Invalid step slug "" in flow "f": it is empty',
  'the empty string');
select throws_ok($$select pgflow.add_step('f', 'a__b')$$, '23514',
  'Invalid step slug "a__b" in flow "f": it contains a double underscore (reserved for generated queue names)',
  'a double underscore (0002)');
select is((select count(*) from pgflow.steps), 0::bigint, 'no step was stored');
select is((select count(*) from pgmq.meta), 0::bigint, 'no queue was provisioned for a rejected step');

select * from finish();
rollback;
