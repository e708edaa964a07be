-- Concurrency limits are deployment options beside the shape (ensure_flow_compiled's
-- flow_control): stored in one spelling, verified, a mismatch when they differ (kind
-- 'flowControl'), replaced by a local recompilation; bad options are refused naming what is
-- wrong, and change nothing.
begin;
select plan(17);

\set shape '{"steps": [{"slug": "fetch", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail", "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}, {"slug": "save", "stepType": "single", "dependencies": ["fetch"], "whenUnmet": "skip", "whenExhausted": "fail", "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}]}'

select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null,
                                      '{"concurrencyLimit": 10, "steps": {"fetch": {"concurrencyLimit": 2}, "save": {}}}')
          - array['routes', 'differences'],
          '{"status": "compiled", "queue_mode": "flow", "queue_name": "limited", "flow_alias": "limited",
            "flow_control": {"concurrencyLimit": 10, "steps": {"fetch": {"concurrencyLimit": 2}}},
            "activation": "activated", "active_flow_slug": "limited", "mismatchKind": null}'::jsonb,
          'a new flow is compiled with its limits (a step without a limit is left out)');
select results_eq($$select flow_slug, flow_limit from pgflow.concurrency_gates$$,
                  $$values ('limited'::text, 10)$$, 'its gate row holds the flow limit');
select results_eq($$select step_slug, step_limit from pgflow.step_concurrency_limits where flow_slug = 'limited'$$,
                  $$values ('fetch'::text, 2)$$, 'and each limited step has a row');
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null,
                                      '{"steps": {"fetch": {"concurrencyLimit": 2}}, "concurrencyLimit": 10}')->>'status',
          'verified', 'the same limits in another key order verify');

set local pgflow.local = 'off';
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null,
                                      '{"steps": {"fetch": {"concurrencyLimit": 3}, "save": {"concurrencyLimit": 1}}}')
          - array['routes', 'queue_mode', 'queue_name', 'flow_alias', 'activation', 'active_flow_slug'],
          jsonb_build_object('status', 'mismatch', 'mismatchKind', 'flowControl',
            'differences', jsonb_build_array('Concurrency limit of the flow differs: none vs 10',
                                             'Concurrency limit of step ''fetch'' differs: 3 vs 2',
                                             'Concurrency limit of step ''save'' differs: 1 vs none'),
            'flow_control', '{"concurrencyLimit": 10, "steps": {"fetch": {"concurrencyLimit": 2}}}'::jsonb),
          'in production, other limits are a mismatch naming each difference, worker first');
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol())->>'mismatchKind',
          'flowControl', 'and so is deploying the flow without its limits');
select results_eq($$select step_slug, step_limit from pgflow.step_concurrency_limits where flow_slug = 'limited'$$,
                  $$values ('fetch'::text, 2)$$, 'a mismatch changes nothing');

set local pgflow.local = 'on';
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null,
                                      '{"steps": {"save": {"concurrencyLimit": 1}}}')->>'status',
          'recompiled', 'a local database recompiles the flow with the new limits');
select results_eq($$select g.flow_limit, l.step_slug, l.step_limit from pgflow.concurrency_gates g
                    join pgflow.step_concurrency_limits l using (flow_slug) where flow_slug = 'limited'$$,
                  $$values (null::int, 'save'::text, 1)$$, 'which replace the old ones');
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null, '{}')->>'status',
          'recompiled', 'recompiling without limits');
select is((select count(*) from pgflow.concurrency_gates where flow_slug = 'limited'), 0::bigint,
          'removes the gate row (and the step rows with it)');
select is(pgflow.ensure_flow_compiled('limited', :'shape', pgflow.worker_protocol(), 'flow', null, null, 'null')->>'status',
          'verified', 'no options (NULL, JSON null or {}) are all the same deployment');

-- Bad options: refused, naming the flow and the offending option or step; nothing changes.
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('limited', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                       :'shape', '{"steps": {"ship": {"concurrencyLimit": 1}}}'), '22023',
                                'Invalid flow control for flow "limited": step "ship" is not in the flow',
                                'a limit on a step the flow does not have');
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('limited', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                       :'shape', '{"concurrencyLimits": 1}'), '22023',
                                'Invalid flow control for flow "limited": unknown option "concurrencyLimits"%',
                                'an unknown option');
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('limited', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                                       :'shape', '{"steps": {"fetch": {"concurrencyLimit": 0}}}'), '22023',
                                'Invalid concurrency limit 0 for step "fetch" of flow "limited": expected a whole number from 1 to 2147483647',
                                'a limit below 1');
create function pg_temp.error_of(p_sql text) returns text language plpgsql as $$
begin
  execute p_sql;
  return 'no error';
exception when others then
  return sqlstate || ': ' || sqlerrm;
end;
$$;
select is(array(select pg_temp.error_of(format(
                  $$select pgflow.ensure_flow_compiled('limited', %L, pgflow.worker_protocol(), 'flow', null, null, %L)$$,
                  :'shape', format('{"concurrencyLimit": %s}', l)))
                from unnest(array['1.5', '"3"', '2147483648', '-1', 'true']) l),
          array(select format('22023: Invalid concurrency limit %s for flow "limited": expected a whole number from 1 to 2147483647', l)
                from unnest(array['1.5', '"3"', '2147483648', '-1', 'true']) l),
          'a fraction, a string, a number past int, a negative or a boolean');
select is((select count(*) from pgflow.concurrency_gates), 0::bigint, 'refused options store nothing');

select * from finish();
rollback;
