-- An alias whose members have no active version (its pointer row is missing: flows inserted
-- directly) is initialised only with NULL as the expected version.
begin;
select plan(4);

insert into pgflow.flows (flow_slug, flow_alias) values ('reportV1', 'report'), ('reportV2', 'report');
select throws_ok($$select pgflow.start_flow('report', '{}')$$, 'P0002', 'Flow alias "report" does not exist', 'the alias cannot be started yet');
select throws_ok($$select pgflow.activate_flow_version('report', 'reportV2', 'reportV1')$$, '55000',
  'Alias "report" has no active version, but "reportV1" was expected; nothing changed (read the current version and decide again)',
  'expecting a version of an alias without one is a conflict');
select is((pgflow.activate_flow_version('report', 'reportV2', null)).flow_slug, 'reportV2', 'NULL initialises it');
select is((select flow_slug from pgflow.start_flow('report', '{}')), 'reportV2', 'and the alias starts');

select * from finish();
rollback;
