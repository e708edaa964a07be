-- NULL, empty, too long, bad characters, the reserved word "run" and (since 0002) leading,
-- trailing and double underscores are not valid slugs.
begin;
select plan(14);

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
select is(pgflow.is_valid_slug('_private'), false, 'a leading underscore (0.16.0 allowed it)');
select is(pgflow.is_valid_slug('step_'), false, 'a trailing underscore (0.16.0 allowed it)');
select is(pgflow.is_valid_slug('a__b'), false, 'a double underscore (0.16.0 allowed it)');
select is(pgflow.is_valid_slug('a__b_'), false, 'double and trailing underscores together');

select * from finish();
rollback;
