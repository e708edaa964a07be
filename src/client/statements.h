// Every statement the Client sends, by name (client.cc uses them; nothing splices SQL text).
#ifndef PGFLOW_CLIENT_STATEMENTS_H_
#define PGFLOW_CLIENT_STATEMENTS_H_

namespace pgflow::internal {

// ---- starts ($1 alias or slug, $2 input, $3 run id or NULL) ----
inline constexpr char kStartFlow[] =
    "select pgflow.start_flow_with_states($1, $2::jsonb, $3::uuid)::text";
inline constexpr char kStartFlowBySlug[] =
    "select pgflow.start_flow_with_states_by_slug($1, $2::jsonb, $3::uuid)::text";
// The lean starts: the run id only.
inline constexpr char kStartRun[] = "select pgflow.start_run($1, $2::jsonb, $3::uuid)::text";
inline constexpr char kStartRunBySlug[] =
    "select pgflow.start_run_by_slug($1, $2::jsonb, $3::uuid)::text";
// The idempotent starts ($1 alias or slug, $2 input, $3 idempotency key): the run id and
// whether this call created it.
inline constexpr char kStartRunIdempotent[] =
    "select s.run_id::text, s.created from pgflow.start_run_idempotent($1, $2::jsonb, $3) s";
inline constexpr char kStartRunIdempotentBySlug[] =
    "select s.run_id::text, s.created from pgflow.start_run_idempotent_by_slug($1, $2::jsonb, $3) "
    "s";

// ---- runs ----
inline constexpr char kGetRun[] = "select pgflow.get_run_with_states($1::uuid)::text";
inline constexpr char kCancelRun[] = "select pgflow.cancel_run($1::uuid, $2)";
inline constexpr char kRetryRun[] = "select pgflow.retry_run($1::uuid, $2::uuid)::text";
inline constexpr char kResumeRun[] = "select (pgflow.resume_run($1::uuid)).run_id";
inline constexpr char kSetRunPriority[] = "select pgflow.set_run_priority($1::uuid, $2::int)";
inline constexpr char kSendSignal[] =
    "select pgflow.send_signal($1::uuid, $2, $3, $4::jsonb, $5::int)";

// ---- aliases ----
// Every alias, as FlowAlias JSON: those with an active version and those whose members have
// none.
inline constexpr char kFlowAliases[] = R"sql(
with members as (
  select f.flow_alias, jsonb_agg(f.flow_slug order by f.created_at, f.flow_slug) as versions
  from pgflow.flows f group by f.flow_alias)
select coalesce(jsonb_agg(jsonb_build_object('alias', m.flow_alias, 'active_flow_slug', a.flow_slug,
                                             'updated_at', a.updated_at, 'versions', m.versions)
                          order by m.flow_alias), '[]'::jsonb)::text
from members m left join pgflow.flow_aliases a on a.flow_alias = m.flow_alias
)sql";
// The activation ($1 alias, $2 flow, $3 expected current version) and the alias it leaves,
// in one statement (one snapshot of the members), as a one-element FlowAlias JSON array.
inline constexpr char kActivateFlowVersion[] = R"sql(
with activated as (select * from pgflow.activate_flow_version($1, $2, $3)),
members as (
  select f.flow_alias, jsonb_agg(f.flow_slug order by f.created_at, f.flow_slug) as versions
  from pgflow.flows f group by f.flow_alias)
select jsonb_build_array(jsonb_build_object('alias', m.flow_alias, 'active_flow_slug', a.flow_slug,
                                            'updated_at', a.updated_at, 'versions', m.versions))::text
from activated a join members m on m.flow_alias = a.flow_alias
)sql";

// ---- events ----
inline constexpr char kEventsChannel[] = "pgflow_events";
inline constexpr char kUnlistenAll[] = "unlisten *";
// A subscription's connection check.
inline constexpr char kPing[] = "select 1";

}  // namespace pgflow::internal

#endif  // PGFLOW_CLIENT_STATEMENTS_H_
