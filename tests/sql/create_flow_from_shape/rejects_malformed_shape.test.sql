-- A malformed shape is rejected (22023) with a message naming the problem, before anything is written.
begin;
select plan(8);

select throws_ok($$select pgflow._create_flow_from_shape('m', '[]')$$, '22023',
  'Invalid flow shape: expected an object with a "steps" array', 'not an object');
select throws_ok($$select pgflow._create_flow_from_shape('m', '{"steps": {}}')$$, '22023',
  'Invalid flow shape: expected an object with a "steps" array', 'steps is not an array');
select throws_ok($$select pgflow._create_flow_from_shape('m', '{"steps": [], "options": 5}')$$, '22023',
  'Invalid flow shape: "options" must be an object', 'options is not an object');
select throws_ok($$select pgflow._create_flow_from_shape('m', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('ok'), pgflow_tests.step_shape('bad') - 'dependencies')))$$, '22023',
  'Invalid flow shape: step at index 1 needs string "slug" and "stepType" and array "dependencies"; "whenUnmet" and "whenExhausted", when present, must be strings and "requiredInputPattern"/"forbiddenInputPattern" objects',
  'a step without dependencies; the message names its index');
select throws_ok($$select pgflow._create_flow_from_shape('m', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('bad') || '{"slug": 5}')))$$, '22023', 'Invalid flow shape: step at index 0 needs string "slug" and "stepType" and array "dependencies"; "whenUnmet" and "whenExhausted", when present, must be strings and "requiredInputPattern"/"forbiddenInputPattern" objects', 'a non-string slug');
select throws_ok($$select pgflow._create_flow_from_shape('m', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('bad') || '{"requiredInputPattern": true}')))$$, '22023', 'Invalid flow shape: step at index 0 needs string "slug" and "stepType" and array "dependencies"; "whenUnmet" and "whenExhausted", when present, must be strings and "requiredInputPattern"/"forbiddenInputPattern" objects', 'a pattern wrapper that is not an object');
select throws_ok($$select pgflow._create_flow_from_shape('m', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('bad') || '{"whenUnmet": null}')))$$, '22023', 'Invalid flow shape: step at index 0 '
  || 'needs string "slug" and "stepType" and array "dependencies"; "whenUnmet" and "whenExhausted", when present, '
  || 'must be strings and "requiredInputPattern"/"forbiddenInputPattern" objects', 'a JSON null mode is not an omitted one');
select ok(not exists (select 1 from pgflow.flows where flow_slug = 'm')
          and not exists (select 1 from pgmq.list_queues() where queue_name = 'm'),
          'no flow and no queue were created');

select * from finish();
rollback;
