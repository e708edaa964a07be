-- A worker function name is a primary key: a btree entry must fit in a third of a page, so a
-- multi-kB name used to fail on the index ("index row size ... exceeds maximum"). Since 0014
-- register_worker refuses a name outside 1..256 bytes with its own error and writes nothing.
begin;
select plan(4);
select pgflow.ensure_flow_compiled('f', '{"steps": []}', pgflow.worker_protocol());

select throws_ok(format($$select pgflow.register_worker(gen_random_uuid(), %L, 'f', 'f', pgflow.worker_protocol())$$,
                        repeat('n', 5000)),
  '22023', 'Worker function name must be 1 to 256 bytes long, not 5000', 'a 5000-byte name is refused, saying why');
select throws_ok($$select pgflow.register_worker(gen_random_uuid(), '', 'f', 'f', pgflow.worker_protocol())$$,
  '22023', 'Worker function name must be 1 to 256 bytes long, not 0', 'so is an empty one');
select lives_ok(format($$select pgflow.register_worker(gen_random_uuid(), %L, 'f', 'f', pgflow.worker_protocol())$$,
                       repeat('é', 128)),
                'a name of 256 bytes (128 two-byte characters) registers');
select is((select count(*)::int from pgflow.worker_functions), 1, 'only it was written');

select * from finish();
rollback;
