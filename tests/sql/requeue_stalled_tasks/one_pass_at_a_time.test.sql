-- One stall recovery pass at a time: a call while another session holds the row
-- 'stall_recovery' of pgflow.locks returns NULL at once (skipped) and records nothing; workers
-- learn who holds it from _lock_holders. A pass records when it ended.
begin;
select plan(6);
select dblink_connect('holder', pgflow_tests.dblink_connstr() || ' application_name=pgtap-recovery');
select pid as holder from dblink('holder', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('holder', 'begin');
select * from dblink('holder', $$select 1 from pgflow.locks where lock_name = 'stall_recovery' for update$$) as t(x int);

set local lock_timeout = '5s';  -- (a wait would fail the test, not hang it)
select is(pgflow.requeue_stalled_tasks(), null, 'a call while another pass holds the lock is skipped: NULL');
select is((select last_completed_at from pgflow.locks where lock_name = 'stall_recovery'), null,
          'and records no pass');
select matches(pgflow._lock_holders((select xmax from pgflow.locks where lock_name = 'stall_recovery'),
                                    'pgflow.locks', clock_timestamp()),
               format('^pid %s \(role postgres, application "pgtap-recovery", idle in transaction, transaction open for ', :holder),
               'the holder is named');

select dblink_exec('holder', 'rollback');
select is(pgflow.requeue_stalled_tasks(), 0, 'once it lets go, a pass runs');
select isnt((select last_completed_at from pgflow.locks where lock_name = 'stall_recovery'), null,
            'and records when it ended');
select is(pgflow._lock_holders((select xmax from pgflow.locks where lock_name = 'stall_recovery'),
                               'pgflow.locks', clock_timestamp()),
          'no session found (the holder may have finished)', 'nobody holds it any more');

select dblink_disconnect('holder');
select * from finish();
rollback;
