-- A deployment that fails changes nothing: a new alias whose first version cannot compile gets
-- no row and no member; an invalid alias is refused before anything is written.
begin;
select plan(7);

select pgmq.create('taken');
select throws_ok($$select pgflow_tests.deploy('taken', 'fresh')$$, '42710', 'PGMQ queue "taken" already exists; pgflow never adopts an existing queue for a new flow "taken". Drop or rename that queue, or use another flow slug',
                 'the first version of a new alias fails to compile (its queue name is taken)');
select is(pgflow_tests.active_version('fresh'), null, 'the alias got no active version');
select is((select count(*) from pgflow.flows), 0::bigint, 'and no member');

select throws_ok($$select pgflow_tests.deploy('greetUserV1', 'greet__user')$$, '23514',
  'Invalid flow alias "greet__user": it contains a double underscore (reserved for generated queue names)',
  'an invalid alias is refused');
select throws_ok($$select pgflow_tests.deploy('greetUserV1', 'run')$$, '23514', 'Invalid flow alias "run": it is the reserved word "run"', 'so is a reserved word');
select throws_ok($$select pgflow_tests.deploy('1greet', null)$$, '23514', 'Invalid flow slug "1greet": it starts with a digit',
                 'a plain flow (self-alias) with an invalid slug is refused for its slug');
select is((select count(*) from pgflow.flows) + (select count(*) from pgflow.flow_aliases), 0::bigint,
          'nothing was written');

select * from finish();
rollback;
