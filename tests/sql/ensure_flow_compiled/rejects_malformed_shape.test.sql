-- A malformed shape is rejected before anything is compared or written, even in local mode.
begin;
select plan(4);

set local pgflow.local = 'on';
select pgflow_tests.setup_flow('sequential');

select throws_ok($$select pgflow.ensure_flow_compiled('sequential', '{"steps": "nope"}', pgflow.worker_protocol())$$, '22023',
  'Invalid flow shape: expected an object with a "steps" array', 'steps is not an array');
select throws_ok($$select pgflow.ensure_flow_compiled('sequential', '{"steps": [{"slug": "first"}]}', pgflow.worker_protocol())$$, '22023',
  'Invalid flow shape: step at index 0 '
  || 'needs string "slug" and "stepType" and array "dependencies"; "whenUnmet" and "whenExhausted", when present, '
  || 'must be strings and "requiredInputPattern"/"forbiddenInputPattern" objects',
  'a step without its type and dependencies');
select is((select count(*) from pgflow.steps where flow_slug = 'sequential'), 3::bigint,
          'the existing flow was not recompiled');
select throws_ok($$select pgflow.ensure_flow_compiled('newflow', '{}', pgflow.worker_protocol())$$, '22023', 'Invalid flow shape: expected an object with a "steps" array',
                 'a missing flow is not created from a malformed shape');

select * from finish();
rollback;
