-- Before schema 0012 the alias and definition locks and the stall recovery lock were advisory
-- locks, which any login may take: a login without a single grant could hold them and block
-- worker startup (ensure_flow_compiled) and activation indefinitely, and turn stall recovery
-- off for every worker, silently. They are rows of pgflow.locks now: a login holding all the old
-- advisory keys changes nothing, and no login but the owner may lock those rows (not even the
-- worker and starter roles). (lock_timeout makes the old behaviour fail here instead of hang.)
-- (The login is made outside the transaction, for the second session; its name does not start
-- with "pgflow", which tests/sql/grants counts as its own roles while running alongside.)
drop role if exists lock_row_stranger;
create role lock_row_stranger login;

begin;
select plan(9);
select dblink_connect('stranger', replace(pgflow_tests.dblink_connstr(), 'user=postgres', 'user=lock_row_stranger'));
select * from dblink('stranger', $$
  select pg_advisory_lock(2, hashtext('orders')), pg_advisory_lock(1, hashtext('orders')),
         pg_advisory_lock(1, hashtext('ordersv2')), pg_advisory_lock(1, hashtext('pgflow.requeue_stalled_tasks'))
$$) as t(a text, b text, c text, d text);
select throws_ok($$select * from dblink('stranger', 'select 1 from pgflow.locks for update') as t(x int)$$,
                 '42501', 'permission denied for schema pgflow', 'the stranger cannot even see pgflow.locks');

set local lock_timeout = '2s';
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset
select is(pgflow.ensure_flow_compiled('orders', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          'a worker compiles a flow whose old advisory keys a stranger holds');
select is(pgflow.ensure_flow_compiled('ordersV2', :'shape'::jsonb, pgflow.worker_protocol(), 'flow', null, 'orders')->>'activation',
          'inactive', 'and deploys a second version of its alias');
select is((pgflow.activate_flow_version('orders', 'ordersV2', 'orders')).flow_slug, 'ordersV2',
          'an operator activates it');
select isnt(pgflow.requeue_stalled_tasks(), null, 'and stall recovery runs');

\i ../grants/_install_as_owner.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role lock_worker_login nologin in role pgflow_worker;
create role lock_starter_login nologin in role pgflow_starter;
set session authorization lock_worker_login;
select throws_ok($$select 1 from pgflow.locks for update$$, '42501', 'permission denied for table locks',
                 'the worker role may read pgflow.locks but not lock its rows');
select throws_ok($$select 1 from pgflow.locks for key share$$, '42501', 'permission denied for table locks',
                 '(in any row lock mode)');
reset session authorization;
set session authorization lock_starter_login;
select throws_ok($$select 1 from pgflow.locks for update$$, '42501', 'permission denied for table locks',
                 'nor the starter role');
reset session authorization;
select is(array(select r from unnest(array['public', 'pgflow_worker', 'pgflow_starter']) r
                where has_table_privilege(r, 'pgflow.locks', 'UPDATE')), '{}'::text[],
          'no role but the owner holds UPDATE on pgflow.locks');

select dblink_disconnect('stranger');
select * from finish();
rollback;
drop role lock_row_stranger;
