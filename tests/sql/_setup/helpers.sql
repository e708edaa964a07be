-- Test-only objects every pgTAP file and database test can use. Loaded into the template
-- database after the migrations; never part of an installation.
create extension if not exists pgtap;
create extension if not exists dblink;
create schema if not exists pgflow_tests;
