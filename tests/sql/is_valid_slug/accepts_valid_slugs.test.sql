-- Slugs that follow upstream 0.16.0's rule (letter or underscore, then letters, digits and
-- underscores, at most 128 characters) are valid.
begin;
select plan(7);

select ok(pgflow.is_valid_slug('a'), 'a single letter');
select ok(pgflow.is_valid_slug('_private'), 'a leading underscore');
select ok(pgflow.is_valid_slug('camelCase'), 'mixed case');
select ok(pgflow.is_valid_slug('step_2'), 'digits after the first character');
select ok(pgflow.is_valid_slug('a__b_'), 'double and trailing underscores (0.16.0 allows them)');
select ok(pgflow.is_valid_slug(repeat('x', 128)), 'exactly 128 characters');
select ok(pgflow.is_valid_slug('runner'), 'words that merely start with "run"');

select * from finish();
rollback;
