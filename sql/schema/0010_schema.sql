-- The pgflow schema. Nothing in it is usable by PUBLIC: sql/contrib/grants.sql gives the
-- worker and starter roles what they need.
create schema if not exists pgflow;
revoke all on schema pgflow from public;
