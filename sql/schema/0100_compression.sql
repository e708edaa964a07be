-- How large values are compressed (since 0024): a run's input and output, a step's and a
-- task's output and a signal's payload, the values that carry a flow's data, use lz4 where
-- the server was built with it (PostgreSQL's own default is pglz). A value over about 2 kB
-- is compressed when it is stored, and a result stores its output three times (task, step,
-- run): pglz took 3-4 times as long as lz4 on this project's machine, and on text it cannot
-- shrink by a quarter (hex digests, base64, most binary data as text) it works through the
-- whole value before storing it as it is. A server without lz4 keeps pglz. Values stored
-- before keep their compression.
do $$
begin
  if exists (select 1 from pg_catalog.pg_settings s
             where s.name = 'default_toast_compression' and 'lz4' = any (s.enumvals)) then
    alter table pgflow.runs alter column input set compression lz4,
                            alter column output set compression lz4;
    alter table pgflow.step_states alter column output set compression lz4;
    alter table pgflow.step_tasks alter column output set compression lz4;
    alter table pgflow.signals alter column payload set compression lz4;
  end if;
end
$$;
