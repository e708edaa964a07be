-- ensure_flow_compiled takes the flow's definition lock (the row 'flow:<lower(slug)>' of
-- pgflow.locks since 0012, keyed by the lower-cased slug since 0002, so case aliases share it) and keeps it until the
-- transaction ends, so concurrent compilations of one flow queue up. Only the current
-- signature compiles; the 0.16.0 signature remains but refuses.
begin;
select plan(5);

select pgflow.ensure_flow_compiled('locked', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select dblink_connect('other', pgflow_tests.dblink_connstr());

select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_definition('locked')$$),
          true, 'another session cannot take the lock of that flow');
select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_definition('unrelated')$$),
          false, 'the lock of another flow is free');
select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_definition('Locked')$$),
          true, 'a case alias of the flow maps to the same lock');
select has_function('pgflow', 'ensure_flow_compiled', array['text', 'jsonb', 'integer', 'text', 'jsonb', 'text', 'jsonb'],
                    'the worker signature (flow_slug, shape, worker_protocol, queue_mode, route_map, flow_alias, flow_control)');
select throws_ok($$select pgflow.ensure_flow_compiled('locked', pgflow._get_flow_shape('locked'))$$, '0A000', 'pgflow: worker protocol none is not supported by this database (it speaks protocol 6): upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)',
                 'the 0.16.0 signature (flow_slug, shape) exists but refuses with a protocol error');

select dblink_disconnect('other');
select * from finish();
rollback;
