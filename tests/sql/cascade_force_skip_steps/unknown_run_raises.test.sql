-- An unknown run is an error.
begin;
select plan(1);
select throws_ok($$select pgflow._cascade_force_skip_steps('00000000-0000-0000-0000-000000000001', 's', 'condition_unmet')$$,
                 'P0002', 'Run not found: 00000000-0000-0000-0000-000000000001', 'Run not found');
select * from finish();
rollback;
