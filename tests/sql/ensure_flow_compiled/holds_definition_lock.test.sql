-- ensure_flow_compiled takes the flow's definition lock (advisory xact lock (1, hashtext(slug)))
-- and keeps it until the transaction ends, so concurrent compilations of one flow queue up.
begin;
select plan(3);

select pgflow.ensure_flow_compiled('locked', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))));
select dblink_connect('other', pgflow_tests.dblink_connstr());

select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(1, hashtext('locked'))$$) as t(ok boolean)),
          false, 'another session cannot take the lock of that flow');
select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(1, hashtext('unrelated'))$$) as t(ok boolean)),
          true, 'the lock of another flow is free');
select has_function('pgflow', 'ensure_flow_compiled', array['text', 'jsonb'],
                    'the 0.16.0 signature (flow_slug, shape), without allow_data_loss');

select dblink_disconnect('other');
select * from finish();
rollback;
