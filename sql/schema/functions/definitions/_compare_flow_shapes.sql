-- Human-readable differences between two flow shapes, compared index by index in upstream's
-- order and wording. Unlike upstream, a key missing on one side is a difference (shown as
-- <missing>), never silently equal. A step's "wait" (since 0021) is compared last, and only
-- when one side has it (upstream's shapes have none).
-- Locks: none.
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_shapes(p_local jsonb, p_db jsonb) returns text[]
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_local_steps jsonb := coalesce(p_local->'steps', '[]'::jsonb);
  v_db_steps jsonb := coalesce(p_db->'steps', '[]'::jsonb);
  v_local_count int := jsonb_array_length(v_local_steps);
  v_db_count int := jsonb_array_length(v_db_steps);
  v_diffs text[] := '{}';
  v_l jsonb;
  v_d jsonb;
  v_key text;
  v_label text;
  i int;
begin
  if v_local_count <> v_db_count then
    v_diffs := v_diffs || format('Step count differs: %s vs %s', v_local_count, v_db_count);
  end if;
  for i in 0 .. greatest(v_local_count, v_db_count) - 1 loop
    v_l := v_local_steps->i;
    v_d := v_db_steps->i;
    if v_l is null then
      v_diffs := v_diffs || format('Step at index %s: missing in first shape (second has ''%s'')',
                                   i, v_d->>'slug');
      continue;
    end if;
    if v_d is null then
      v_diffs := v_diffs || format('Step at index %s: missing in second shape (first has ''%s'')',
                                   i, v_l->>'slug');
      continue;
    end if;
    -- Upstream's order: slug, type, dependencies, whenUnmet, whenExhausted, patterns.
    foreach v_key in array array['slug', 'stepType'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_label := case v_key when 'slug' then 'slug' when 'stepType' then 'type' else v_key end;
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_label,
                                     coalesce(v_l->>v_key, '<missing>'),
                                     coalesce(v_d->>v_key, '<missing>'));
      end if;
    end loop;
    if pgflow._sorted_text_array(v_l->'dependencies') is distinct from
       pgflow._sorted_text_array(v_d->'dependencies') then
      v_diffs := v_diffs || format('Step at index %s: dependencies differ [%s] vs [%s]', i,
        coalesce(array_to_string(pgflow._sorted_text_array(v_l->'dependencies'), ', '), '<missing>'),
        coalesce(array_to_string(pgflow._sorted_text_array(v_d->'dependencies'), ', '), '<missing>'));
    end if;
    foreach v_key in array array['whenUnmet', 'whenExhausted'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_key,
                                     coalesce(v_l->>v_key, '<missing>'),
                                     coalesce(v_d->>v_key, '<missing>'));
      end if;
    end loop;
    foreach v_key in array array['requiredInputPattern', 'forbiddenInputPattern', 'wait'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_key,
                                     coalesce((v_l->v_key)::text, '<missing>'),
                                     coalesce((v_d->v_key)::text, '<missing>'));
      end if;
    end loop;
  end loop;
  return v_diffs;
end;
$$;
