-- A JSON array of strings as a sorted text[]; NULL when the value is missing or not an array.
-- Called by: _compare_flow_shapes.
create or replace function pgflow._sorted_text_array(p_value jsonb) returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when jsonb_typeof(p_value) = 'array'
    then array(select e from jsonb_array_elements_text(p_value) e order by e collate "C")
  end
$$;
