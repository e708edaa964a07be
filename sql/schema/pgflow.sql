-- The pgflow SQL core as it is now, in build order: `psql -f sql/schema/pgflow.sql` on a
-- database that has PGMQ builds exactly what applying every migration in sql/migrations/
-- builds (scripts/sql-schema check proves it; sql/README.md says how to change the core).
--
-- Function bodies are not checked at creation (as in pg_dump output), so the functions can be
-- listed by concern rather than by call order. Only the slug and wait rules and the run id come
-- before the tables: check constraints and a column default call them.
\set ON_ERROR_STOP on
set check_function_bodies = off;
set client_min_messages = warning;

\ir 0010_schema.sql
\ir functions/definitions/_slug_problem.sql
\ir functions/definitions/is_valid_slug.sql
\ir functions/waits/_is_whole_seconds.sql
\ir functions/waits/_wait_problem.sql
\ir 0020_definitions.sql
\ir 0030_workers.sql
\ir functions/runtime/_new_run_id.sql
\ir 0040_runtime.sql
\ir 0050_types.sql
\ir 0060_locks.sql
\ir 0070_idempotency.sql
\ir 0080_concurrency_limits.sql
\ir 0090_signals.sql
\ir 0100_compression.sql

-- Definitions: building, comparing, compiling and deleting flows.
\ir functions/definitions/is_local.sql
\ir functions/locks/_lock_holders.sql
\ir functions/locks/_lock_row.sql
\ir functions/locks/_bound_lock_waits.sql
\ir functions/locks/_raise_lock_timeout.sql
\ir functions/locks/_lock_flow_definition.sql
\ir functions/locks/_lock_flow_alias.sql
\ir functions/definitions/create_flow.sql
\ir functions/definitions/_create_flow.sql
\ir functions/definitions/_add_step.sql
\ir functions/definitions/add_step.sql
\ir functions/definitions/_refuse_step_queued_flow.sql
\ir functions/definitions/_get_flow_shape.sql
\ir functions/definitions/_sorted_text_array.sql
\ir functions/definitions/_compare_flow_shapes.sql
\ir functions/definitions/_flow_route.sql
\ir functions/definitions/_get_flow_route.sql
\ir functions/definitions/_compare_flow_routes.sql
\ir functions/definitions/_validate_flow_shape.sql
\ir functions/definitions/_with_shape_defaults.sql
\ir functions/definitions/_preflight_flow_shape.sql
\ir functions/definitions/_create_flow_from_shape.sql
\ir functions/definitions/delete_flow_and_data.sql
\ir functions/definitions/_delete_flow_contents.sql
\ir functions/definitions/_flows_before_delete.sql
\ir functions/definitions/ensure_flow_compiled.sql
\ir functions/definitions/activate_flow_version.sql
\ir functions/definitions/add_wait_step.sql

-- Concurrency limits: the deployment options and admission at commit.
\ir functions/limits/_normalize_flow_control.sql
\ir functions/limits/_get_flow_control.sql
\ir functions/limits/_store_flow_control.sql
\ir functions/limits/_compare_flow_control.sql
\ir functions/limits/_concurrency_key_of.sql
\ir functions/limits/_activate_keys.sql
\ir functions/limits/_admit_tasks.sql
\ir functions/limits/_admit_gated_tasks.sql
\ir functions/limits/_admit_waiting_tasks.sql
\ir functions/limits/_admit_recorded_flows.sql

-- Queues: provisioning and every PGMQ operation on a task's message.
\ir functions/queues/_queue_meta_name.sql
\ir functions/queues/_provision_flow_queue.sql
\ir functions/queues/_step_queue_name.sql
\ir functions/queues/_preflight_step_queues.sql
\ir functions/queues/_verify_step_queues.sql
\ir functions/queues/_create_queue.sql
\ir functions/queues/_announce_work.sql
\ir functions/queues/_send_task_messages.sql
\ir functions/queues/_announce_stopped_tasks.sql
\ir functions/queues/_archive_task_message.sql
\ir functions/queues/_set_task_message_vt.sql
\ir functions/queues/_terminate_tasks.sql
\ir functions/queues/_archive_messages.sql
\ir functions/queues/set_vt_batch.sql

-- Events.
\ir functions/events/_emit_events.sql
\ir functions/events/_emit_run_event.sql
\ir functions/events/_run_event_details.sql
\ir functions/events/_emit_step_event.sql
\ir functions/events/_step_event_details.sql
\ir functions/events/_emit_step_events.sql

-- Runtime: starting runs, moving them forward, results.
\ir functions/runtime/start_flow.sql
\ir functions/runtime/start_flow_by_alias.sql
\ir functions/runtime/start_flow_by_slug.sql
\ir functions/runtime/_resolve_flow_alias.sql
\ir functions/runtime/start_flow_with_states.sql
\ir functions/runtime/start_flow_with_states_by_slug.sql
\ir functions/runtime/start_run_by_slug.sql
\ir functions/runtime/_start_run_idempotent.sql
\ir functions/runtime/start_run_idempotent.sql
\ir functions/runtime/start_run_idempotent_by_slug.sql
\ir functions/runtime/start_run.sql
\ir functions/runtime/_lock_run_for_control.sql
\ir functions/runtime/cancel_run.sql
\ir functions/runtime/retry_run.sql
\ir functions/runtime/set_run_priority.sql
\ir functions/runtime/resume_run.sql
\ir functions/runtime/get_run_with_states.sql
\ir functions/runtime/_advance_run.sql
\ir functions/runtime/start_ready_steps.sql
\ir functions/runtime/_enqueue_step_tasks.sql
\ir functions/runtime/cascade_resolve_conditions.sql
\ir functions/runtime/cascade_complete_taskless_steps.sql
\ir functions/runtime/_cascade_force_skip_steps.sql
\ir functions/runtime/_condition_input.sql
\ir functions/runtime/_release_children.sql
\ir functions/runtime/maybe_complete_run.sql
\ir functions/runtime/_run_output.sql
\ir functions/runtime/_fail_run.sql
\ir functions/runtime/complete_task.sql
\ir functions/runtime/_fail_type_violation.sql
\ir functions/runtime/complete_tasks.sql
\ir functions/runtime/_check_task_results.sql
\ir functions/runtime/_task_results.sql
\ir functions/runtime/_lock_runs.sql
\ir functions/runtime/fail_task.sql
\ir functions/runtime/_fail_task.sql
\ir functions/runtime/fail_tasks.sql
\ir functions/runtime/calculate_retry_delay.sql

-- Waits: wait steps, signals and timers.
\ir functions/waits/_wait_deadline.sql
\ir functions/waits/_start_waiting_tasks.sql
\ir functions/waits/_resolve_waiting_task.sql
\ir functions/waits/_settle_waits.sql
\ir functions/waits/send_signal.sql
\ir functions/waits/_settle_due_runs.sql
\ir functions/waits/wake_waiting_tasks.sql

-- Claims: the queue-aware claim boundary.
\ir functions/claims/claim_tasks.sql
\ir functions/claims/_classify_claim_batch.sql
\ir functions/claims/_refuse_claim_batch.sql
\ir functions/claims/release_claim.sql
\ir functions/claims/start_tasks.sql
\ir functions/claims/poll_for_tasks.sql

-- Workers: the startup handshake, registration, heartbeats.
\ir functions/workers/worker_protocol.sql
\ir functions/workers/_require_worker_protocol.sql
\ir functions/workers/track_worker_function.sql
\ir functions/workers/_workers_require_protocol.sql
\ir functions/workers/register_worker.sql
\ir functions/workers/worker_heartbeat.sql
\ir functions/workers/resume_worker_function.sql
\ir functions/workers/_pause_worker_function.sql
\ir functions/workers/mark_worker_stopped.sql
\ir functions/workers/is_live_worker.sql
\ir functions/workers/has_visible_work.sql

-- Maintenance: stall recovery.
\ir functions/maintenance/requeue_stalled_tasks.sql
\ir functions/maintenance/setup_requeue_stalled_tasks_cron.sql
\ir functions/maintenance/run_ended_before.sql
