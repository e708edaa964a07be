-- Property test: complete_tasks (and fail_tasks) leave exactly the state, events and returned
-- rows that complete_task (fail_task) applied one by one in (run_id, step_slug, task_index)
-- order would. 30 random DAGs (single and map steps, fan-in, conditions with every when_unmet
-- mode, every when_exhausted mode), 3 runs each, driven like a worker: each round claims
-- everything claimable in every flow and reports it as ONE mixed batch of failures and ONE of
-- completions (random outputs, so type violations happen), with some results duplicated,
-- some re-reported from the round before (stale) and some for tasks that do not exist. Each
-- batch is first applied one by one in a subtransaction that is rolled back, then as a batch;
-- the two states must be equal. Deterministic: the random generator is seeded.
begin;
select plan(5);
select setseed(0.17);
select pgflow_tests.install_realtime_stub();
\i _state.sql
create temp table differences (round int, call text, parts text[]);
create temp table batch_stats (round int, call text, results int);

do $$
declare
  k int; i int; n int; nd int; deps text[]; typ text; req jsonb; forb jsonb; cand text[];
  v_flow text; v_input jsonb; has_root_map boolean; rnd int; claimed int;
  r record; v_fail jsonb; v_done jsonb; v_prev jsonb := '[]'; v_item jsonb;
  v_expected jsonb; v_expected_rows jsonb; v_actual jsonb; v_actual_rows jsonb; v_call text;
  v_batch jsonb;
begin
  for k in 1..30 loop
    v_flow := 'pt_' || k;
    perform pgflow.create_flow(v_flow, max_attempts => 1 + (random() * 1.5)::int, base_delay => 0);
    n := 1 + (random() * 5)::int;
    for i in 1..n loop
      typ := case when random() < 0.35 then 'map' else 'single' end;
      cand := array(select 's' || j from generate_series(1, i - 1) j order by random());
      nd := least(cardinality(cand), (random() * 2.4)::int);
      if typ = 'map' then nd := least(nd, 1); end if;
      deps := coalesce(cand[1:nd], '{}');
      req := null; forb := null;
      if random() < 0.25 then
        req := case when nd > 0 then jsonb_build_object(deps[1], jsonb_build_object('ok', true))
                    else '{"ok": true}' end;
        if random() < 0.4 then forb := req; req := null; end if;
      end if;
      perform pgflow.add_step(v_flow, 's' || i, deps, step_type => typ,
        required_input_pattern => req, forbidden_input_pattern => forb,
        when_unmet => (array['skip', 'skip-cascade', 'fail'])[1 + floor(random() * 3)::int],
        when_exhausted => (array['skip', 'skip-cascade', 'fail'])[1 + floor(random() * 3)::int]);
    end loop;
    select exists (select 1 from pgflow.steps where flow_slug = v_flow and step_type = 'map' and deps_count = 0)
    into has_root_map;
    for i in 1..3 loop
      v_input := case when has_root_map
        then (select coalesce(jsonb_agg(jsonb_build_object('ok', random() < 0.5)), '[]') from generate_series(1, (random() * 4)::int))
        else jsonb_build_object('ok', random() < 0.5) end;
      perform pgflow.start_flow(v_flow, v_input);
    end loop;
  end loop;

  for rnd in 1..60 loop
    v_fail := '[]'; v_done := '[]'; claimed := 0;
    for k in 1..30 loop
      v_flow := 'pt_' || k;
      perform pgflow_tests.ensure_worker(v_flow);
      perform pgflow_tests.reset_message_visibility(v_flow);
      for r in select * from pgflow.start_tasks(v_flow, array(select msg_id from pgmq.read(v_flow, 30, 100)),
                                                '11111111-1111-1111-1111-111111111111') loop
        claimed := claimed + 1;
        if random() < 0.2 then
          v_item := jsonb_build_object('run_id', r.run_id, 'step_slug', r.step_slug, 'task_index', r.task_index,
                                       'error_message', 'boom ' || rnd);
          v_fail := v_fail || jsonb_build_array(v_item);
        else
          v_item := jsonb_build_object('run_id', r.run_id, 'step_slug', r.step_slug, 'task_index', r.task_index,
            'output', case (random() * 4)::int
                        when 0 then jsonb_build_object('ok', random() < 0.5)
                        when 1 then (select coalesce(jsonb_agg(jsonb_build_object('ok', random() < 0.5)), '[]')
                                     from generate_series(1, (random() * 3)::int))
                        when 2 then '"s"'::jsonb
                        when 3 then 'null'::jsonb
                        else jsonb_build_object('ok', true) end);
          v_done := v_done || jsonb_build_array(v_item);
        end if;
        if random() < 0.05 then v_done := v_done || jsonb_build_array(v_item - 'error_message' || '{"output": 1}'); end if;
        if random() < 0.03 then
          v_done := v_done || jsonb_build_array(jsonb_set(v_item - 'error_message', '{task_index}', '99') || '{"output": 2}');
        end if;
      end loop;
    end loop;
    exit when claimed = 0;
    -- Stale results: some of the previous round's completions, reported again.
    v_done := v_done || coalesce((select jsonb_agg(e) from jsonb_array_elements(v_prev) e where random() < 0.15), '[]');
    v_prev := v_done;

    foreach v_call in array array['fail_tasks', 'complete_tasks'] loop
      v_batch := case v_call when 'fail_tasks' then v_fail else v_done end;
      insert into batch_stats values (rnd, v_call, jsonb_array_length(v_batch));
      begin
        v_expected_rows := pg_temp.returned(pg_temp.one_by_one(v_batch, v_call = 'fail_tasks'));
        v_expected := pg_temp.core_state();
        raise exception using errcode = 'PGUND', message = 'undo the one-by-one branch';
      exception when sqlstate 'PGUND' then
        null;
      end;
      if v_call = 'fail_tasks' then
        v_actual_rows := pg_temp.returned(array(select t from pgflow.fail_tasks(v_batch) t));
      else
        v_actual_rows := pg_temp.returned(array(select t from pgflow.complete_tasks(v_batch) t));
      end if;
      v_actual := pg_temp.core_state();
      if v_actual is distinct from v_expected or v_actual_rows is distinct from v_expected_rows then
        insert into differences
        select rnd, v_call,
               array(select key from jsonb_each(v_expected) e
                     where e.value is distinct from v_actual->e.key)
               || case when v_actual_rows is distinct from v_expected_rows then array['returned rows'] else '{}' end;
      end if;
    end loop;
  end loop;
end $$;

select is_empty($$select * from differences$$, 'every batch left the state one-by-one application leaves');
select ok((select sum(results) >= 200 and max(results) >= 50 from batch_stats where call = 'complete_tasks'),
          'the completion batches were big: 200 results or more in all, one of 50 or more');
select ok((select count(*) from pgflow.runs where status = 'completed') >= 10, 'many runs completed');
select ok((select count(*) from pgflow.runs where status = 'failed') >= 5, 'several runs failed');
select is((select count(*)::int from pgflow.runs where status = 'started'), 0, 'every run ended');

select * from finish();
rollback;
