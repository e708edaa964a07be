-- Why a slug breaks the shared slug rules (letters, digits and single internal underscores; no
-- leading digit or underscore, no trailing underscore, no `__`, at most 128 characters, not the
-- reserved word "run"), or NULL when it is valid. The C++ DSL checks the same rules at compile
-- time; both are driven by tests/data/slug_cases.tsv.
-- Locks: none (immutable).
-- Called by: is_valid_slug, _create_flow, _add_step, _preflight_flow_shape, ensure_flow_compiled
-- (the alias).
create or replace function pgflow._slug_problem(slug text) returns text
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select case
    when slug is null or slug = '' then 'is empty'
    when length(slug) > 128 then 'is longer than 128 characters'
    when slug !~ '^[A-Za-z0-9_]+$' then 'may contain only ASCII letters, digits and underscores'
    when slug ~ '^[0-9]' then 'starts with a digit'
    when slug ~ '^_' then 'starts with an underscore'
    when slug ~ '_$' then 'ends with an underscore'
    when slug ~ '__' then 'contains a double underscore (reserved for generated queue names)'
    when slug = 'run' then 'is the reserved word "run"'
  end
$$;
