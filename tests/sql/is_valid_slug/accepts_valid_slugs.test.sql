-- Slugs that follow the shared rules of 0002 (a letter, then letters, digits and single
-- internal underscores, at most 128 characters, not "run") are valid; camelCase is kept.
-- The full case table is tests/data/slug_cases.tsv (folder slug_rules).
begin;
select plan(7);

select ok(pgflow.is_valid_slug('a'), 'a single letter');
select ok(pgflow.is_valid_slug('send_email_now'), 'single internal underscores');
select ok(pgflow.is_valid_slug('camelCase'), 'mixed case');
select ok(pgflow.is_valid_slug('step_2'), 'digits after the first character');
select ok(pgflow.is_valid_slug('Run'), 'Run (the reserved word is case-sensitive)');
select ok(pgflow.is_valid_slug(repeat('x', 128)), 'exactly 128 characters');
select ok(pgflow.is_valid_slug('runner'), 'words that merely start with "run"');

select * from finish();
rollback;
