-- Property test: 40 random DAGs (single and map steps, fan-in, if/ifNot conditions with every
-- when_unmet mode, every when_exhausted mode, 1-2 attempts) driven like a worker with random
-- outcomes (complete with an object, an array or a string; fail) until nothing is claimable.
-- Every run must end completed or failed with no unfinished task, no active message,
-- remaining_steps equal to the steps not completed or skipped, map outputs as long as their
-- task count, no ready step left behind by a completed run, and no step that ran (or completed
-- taskless) against its own condition. Deterministic: the random generator is seeded.
begin;
select plan(4);
select setseed(0.42);
create temp table violations (flow text, run_status text, problem text);

do $$
declare
  k int; i int; n int; nd int; deps text[]; typ text; req jsonb; forb jsonb; cand text[];
  v_run uuid; v_input jsonb; r record; rounds int; claimed int; v_status text; v_flow text;
  has_root_map boolean; bad text;
begin
  for k in 1..40 loop
    v_flow := 'fz_' || k;
    -- Since 0002 a worker claims only from the queue it is registered for.
    perform pgflow_tests.ensure_worker(v_flow);
    perform pgflow.create_flow(v_flow, max_attempts => 1 + (random() * 1.5)::int, base_delay => 0);
    n := 2 + (random() * 6)::int;
    for i in 1..n loop
      typ := case when random() < 0.35 then 'map' else 'single' end;
      cand := array(select 's' || j from generate_series(1, i - 1) j order by random());
      nd := least(cardinality(cand), (random() * 2.4)::int);
      if typ = 'map' then nd := least(nd, 1); end if;
      deps := coalesce(cand[1:nd], '{}');
      req := null; forb := null;
      if random() < 0.3 then
        if nd > 0 then
          req := case when random() < 0.5 then jsonb_build_object(deps[1], '{}'::jsonb)
                      else jsonb_build_object(deps[1], jsonb_build_object('ok', true)) end;
        else
          req := '{"ok": true}';
        end if;
        if random() < 0.4 then forb := req; req := null; end if;
      end if;
      perform pgflow.add_step(v_flow, 's' || i, deps, step_type => typ,
        required_input_pattern => req, forbidden_input_pattern => forb,
        when_unmet => (array['skip', 'skip-cascade', 'fail'])[1 + floor(random() * 3)::int],
        when_exhausted => (array['skip', 'skip-cascade', 'fail'])[1 + floor(random() * 3)::int]);
    end loop;
    select exists (select 1 from pgflow.steps where flow_slug = v_flow and step_type = 'map' and deps_count = 0) into has_root_map;
    if has_root_map then
      v_input := (select coalesce(jsonb_agg(jsonb_build_object('ok', random() < 0.5)), '[]') from generate_series(1, (random() * 3)::int));
    else
      v_input := jsonb_build_object('ok', random() < 0.5);
    end if;
    select run_id into v_run from pgflow.start_flow(v_flow, v_input);
    rounds := 0;
    loop
      select status into v_status from pgflow.runs where run_id = v_run;
      exit when v_status <> 'started' or rounds > 50;
      rounds := rounds + 1;
      perform pgflow_tests.reset_message_visibility(v_flow);
      claimed := 0;
      for r in select * from pgflow.start_tasks(v_flow, array(select msg_id from pgmq.read(v_flow, 30, 100)),
                                                '11111111-1111-1111-1111-111111111111') order by random() loop
        claimed := claimed + 1;
        if random() < 0.25 then
          perform pgflow.fail_task(r.run_id, r.step_slug, r.task_index, 'err');
        else
          perform pgflow.complete_task(r.run_id, r.step_slug, r.task_index,
            case (random() * 3)::int
              when 0 then jsonb_build_object('ok', random() < 0.5)
              when 1 then (select coalesce(jsonb_agg(jsonb_build_object('ok', random() < 0.5)), '[]') from generate_series(1, (random() * 2)::int))
              when 2 then '"s"'::jsonb
              else jsonb_build_object('ok', true) end);
        end if;
      end loop;
      if claimed = 0 then
        exit;  -- nothing claimable: the run must be terminal (checked below)
      end if;
    end loop;
    -- invariants
    select status into v_status from pgflow.runs where run_id = v_run;
    bad := null;
    if v_status = 'started' then bad := 'run not terminal'; end if;
    if exists (select 1 from pgflow.step_tasks where run_id = v_run and status in ('queued', 'started')) then
      bad := coalesce(bad || '; ', '') || 'unfinished tasks'; end if;
    if exists (select 1 from pgflow_tests.queue_msg_ids(v_flow)) then bad := coalesce(bad || '; ', '') || 'active messages'; end if;
    if (select remaining_steps from pgflow.runs where run_id = v_run)
       <> (select count(*) from pgflow.step_states where run_id = v_run and status not in ('completed', 'skipped')) then
      bad := coalesce(bad || '; ', '') || 'remaining_steps mismatch'; end if;
    if v_status = 'completed' and exists (select 1 from pgflow.step_states where run_id = v_run and status not in ('completed', 'skipped')) then
      bad := coalesce(bad || '; ', '') || 'completed run with unfinished steps'; end if;
    if exists (select 1 from pgflow.step_states ss join pgflow.steps s using (flow_slug, step_slug)
               where ss.run_id = v_run and ss.status = 'completed' and s.step_type = 'map'
                 and case when s.step_type = 'map' and jsonb_typeof(ss.output) = 'array' then jsonb_array_length(ss.output) <> ss.initial_tasks else s.step_type = 'map' end) then
      bad := coalesce(bad || '; ', '') || 'map output length'; end if;
    if exists (select 1 from pgflow.step_states ss where ss.run_id = v_run and ss.status = 'created' and ss.remaining_deps = 0
                 and v_status = 'completed') then
      bad := coalesce(bad || '; ', '') || 'ready step left'; end if;
    if exists (select 1 from pgflow.step_states c join pgflow.steps s on s.flow_slug = c.flow_slug and s.step_slug = c.step_slug
               where c.run_id = v_run and c.status in ('started', 'completed')
                 and s.required_input_pattern is not null
                 and not pgflow._condition_input(v_run, c.flow_slug, c.step_slug, s.deps_count) @> s.required_input_pattern) then
      bad := coalesce(bad || '; ', '') || 'step ran with unmet if'; end if;
    if exists (select 1 from pgflow.step_states c join pgflow.steps s on s.flow_slug = c.flow_slug and s.step_slug = c.step_slug
               where c.run_id = v_run and c.status in ('started', 'completed')
                 and s.forbidden_input_pattern is not null
                 and pgflow._condition_input(v_run, c.flow_slug, c.step_slug, s.deps_count) @> s.forbidden_input_pattern) then
      bad := coalesce(bad || '; ', '') || 'step ran with matching ifNot'; end if;
    if bad is not null then
      insert into violations values (v_flow, v_status, bad);
    end if;
  end loop;
end $$;

select is_empty($$select * from violations$$, 'no invariant is violated');
select is((select count(*)::int from pgflow.runs where status in ('completed', 'failed')), 40, 'all 40 runs are terminal');
select ok((select count(*) from pgflow.runs where status = 'completed') >= 5, 'several runs completed');
select ok((select count(*) from pgflow.runs where status = 'failed') >= 5, 'several runs failed');

select * from finish();
rollback;
