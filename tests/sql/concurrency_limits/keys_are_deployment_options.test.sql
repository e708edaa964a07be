-- Concurrency keys (fair shares, since 0019) are flow-control options like the limits: stored
-- in one spelling on the flow or a step, compared (a different key is a 'flowControl'
-- mismatch naming it), replaced by a local recompilation; a key needs a limit to share, and
-- bad keys are refused naming what is wrong, changing nothing.
begin;
select plan(16);

\set shape '{"steps": [{"slug": "fetch", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail", "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}, {"slug": "save", "stepType": "single", "dependencies": ["fetch"], "whenUnmet": "skip", "whenExhausted": "fail", "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}]}'

select is(pgflow.ensure_flow_compiled('keyed', :'shape', pgflow.worker_protocol(), 'flow', null, null,
            '{"concurrencyLimit": 10, "concurrencyKey": {"path": ["tenant"], "limit": 3, "weightPath": null},
              "steps": {"fetch": {"concurrencyKey": {"path": ["account", "id"], "weightPath": ["plan", "weight"]}}}}')->'flow_control',
          '{"concurrencyLimit": 10, "concurrencyKey": {"path": ["tenant"], "limit": 3},
            "steps": {"fetch": {"concurrencyKey": {"path": ["account", "id"], "weightPath": ["plan", "weight"]}}}}'::jsonb,
          'a flow key and a step key (with the flow''s limit) are compiled in one spelling');
select results_eq($$select flow_limit, key_path, key_limit, weight_path from pgflow.concurrency_gates where flow_slug = 'keyed'$$,
                  $$values (10, array['tenant'], 3, null::text[])$$, 'the gate row holds the flow''s key');
select results_eq($$select step_slug, step_limit, key_path, key_limit, weight_path from pgflow.step_concurrency_limits where flow_slug = 'keyed'$$,
                  $$values ('fetch'::text, null::int, array['account', 'id'], null::int, array['plan', 'weight'])$$,
                  'a step with a key and no limit of its own has a row');
select results_eq($$select step_slug, concurrency_limited from pgflow.steps where flow_slug = 'keyed' order by step_slug$$,
                  $$values ('fetch'::text, true), ('save', true)$$, 'the flow limit applies to both steps');
select is(pgflow.ensure_flow_compiled('keyed', :'shape', pgflow.worker_protocol(), 'flow', null, null,
            '{"steps": {"fetch": {"concurrencyKey": {"weightPath": ["plan", "weight"], "path": ["account", "id"]}}},
              "concurrencyKey": {"limit": 3, "path": ["tenant"]}, "concurrencyLimit": 10}')->>'status',
          'verified', 'the same keys in another order verify');

set local pgflow.local = 'off';
select is(pgflow.ensure_flow_compiled('keyed', :'shape', pgflow.worker_protocol(), 'flow', null, null,
            '{"concurrencyLimit": 10, "concurrencyKey": {"path": ["tenant"]},
              "steps": {"fetch": {"concurrencyLimit": 2, "concurrencyKey": {"path": ["account", "id"], "weightPath": ["plan", "weight"]}}}}')->'differences',
          jsonb_build_array('Concurrency key of the flow differs: {"path": ["tenant"]} vs {"path": ["tenant"], "limit": 3}',
                            'Concurrency limit of step ''fetch'' differs: 2 vs none'),
          'in production, another key is a mismatch naming each difference, worker first');
select results_eq($$select key_limit from pgflow.concurrency_gates where flow_slug = 'keyed'$$, $$values (3)$$,
                  'a mismatch changes nothing');

set local pgflow.local = 'on';
select is(pgflow.ensure_flow_compiled('keyed', :'shape', pgflow.worker_protocol(), 'flow', null, null,
            '{"steps": {"save": {"concurrencyLimit": 1, "concurrencyKey": {"path": ["tenant"]}}}}')->>'status',
          'recompiled', 'a local database recompiles the flow with the new keys');
select results_eq($$select g.key_path, l.step_slug, l.step_limit, l.key_path from pgflow.concurrency_gates g
                    join pgflow.step_concurrency_limits l using (flow_slug) where flow_slug = 'keyed'$$,
                  $$values (null::text[], 'save'::text, 1, array['tenant'])$$, 'which replace the old ones');

-- A key needs a limit to share; bad keys are refused naming the part and the owner.
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                       :'shape', '{"steps": {"fetch": {"concurrencyKey": {"path": ["tenant"]}}}}'), '22023',
                                'Invalid flow control for step "fetch" of flow "keyed": a concurrency key shares a concurrency limit, and neither the step nor the flow has one',
                                'a step key without a limit');
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                       :'shape', '{"concurrencyKey": {"path": ["tenant"]}}'), '22023',
                                'Invalid flow control for flow "keyed": a concurrency key shares a concurrency limit, and neither the flow nor any of its steps has one',
                                'a flow key without any limit');
create function pg_temp.error_of(p_sql text) returns text language plpgsql as $$
begin
  execute p_sql;
  return 'no error';
exception when others then
  return sqlstate || ': ' || sqlerrm;
end;
$$;
select is(array(select pg_temp.error_of(format(
                  $$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                  :'shape', format('{"concurrencyLimit": 5, "concurrencyKey": {"path": %s}}', p)))
                from unnest(array['"tenant"', '[]', '[""]', '[1]', 'null']) p),
          array(select format('22023: Invalid concurrency key path %s for flow "keyed": expected a path into the run input, a non-empty array of field names such as ["tenant"]', p)
                from unnest(array['"tenant"', '[]', '[""]', '[1]', 'null']) p),
          'a path that is not a non-empty array of non-empty field names');
select is(pg_temp.error_of(format($$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                  :'shape', '{"concurrencyLimit": 5, "concurrencyKey": {"path": ["t"], "weightPath": {}}}')),
          '22023: Invalid concurrency key weightPath {} for flow "keyed": expected a path into the run input, a non-empty array of field names such as ["tenant"]',
          'a weight path likewise');
select is(pg_temp.error_of(format($$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                  :'shape', '{"steps": {"save": {"concurrencyLimit": 5, "concurrencyKey": {"path": ["t"], "limit": 0}}}}')),
          '22023: Invalid concurrency limit 0 for the key of step "save" of flow "keyed": expected a whole number from 1 to 2147483647',
          'a key limit below 1');
select is(pg_temp.error_of(format($$select pgflow.ensure_flow_compiled('keyed', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                  :'shape', '{"concurrencyLimit": 5, "concurrencyKey": {"path": ["t"], "weight": 2}}')),
          '22023: Invalid concurrency key for flow "keyed": expected {"path": ["field", ...], "limit"?: n, "weightPath"?: ["field", ...]}',
          'an unknown key option');
select results_eq($$select step_slug, key_path from pgflow.step_concurrency_limits where flow_slug = 'keyed'$$,
                  $$values ('save'::text, array['tenant'])$$, 'refused options change nothing');

select * from finish();
rollback;
