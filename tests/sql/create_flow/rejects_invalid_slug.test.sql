-- A flow slug that is not a valid slug fails check slug_is_valid before any queue exists.
begin;
select plan(4);

select throws_ok($$select pgflow.create_flow('1flow')$$, '23514',
  'new row for relation "flows" violates check constraint "slug_is_valid"',
  'a leading digit');
select throws_ok($$select pgflow.create_flow('my-flow')$$, '23514',
  'new row for relation "flows" violates check constraint "slug_is_valid"',
  'a hyphen');
select throws_ok($$select pgflow.create_flow('run')$$, '23514',
  'new row for relation "flows" violates check constraint "slug_is_valid"',
  'the reserved word run');
select is((select count(*) from pgmq.list_queues()), 0::bigint, 'no queue was created');

select * from finish();
rollback;
