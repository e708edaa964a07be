-- An unknown flow, or a flow without steps, has the shape {"steps": []}.
begin;
select plan(2);

select is(pgflow._get_flow_shape('nope'), '{"steps": []}'::jsonb, 'unknown flow');
select pgflow.create_flow('empty');
select is(pgflow._get_flow_shape('empty'), '{"steps": []}'::jsonb, 'flow without steps');

select * from finish();
rollback;
