-- NULL, empty, too long, bad characters and the reserved word "run" are not valid slugs.
begin;
select plan(10);

select is(pgflow.is_valid_slug(null), false, 'NULL is invalid (false, not NULL)');
select is(pgflow.is_valid_slug(''), false, 'the empty string');
select is(pgflow.is_valid_slug(repeat('x', 129)), false, 'more than 128 characters');
select is(pgflow.is_valid_slug('1step'), false, 'a leading digit');
select is(pgflow.is_valid_slug('my-step'), false, 'a hyphen');
select is(pgflow.is_valid_slug('my step'), false, 'a space');
select is(pgflow.is_valid_slug('step.one'), false, 'a dot');
select is(pgflow.is_valid_slug('café'), false, 'a non-ASCII letter');
select is(pgflow.is_valid_slug('run'), false, 'the reserved word "run"');
select is(pgflow.is_valid_slug(E'step\n'), false, 'a trailing newline');

select * from finish();
rollback;
