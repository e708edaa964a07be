-- delete_flow_and_data drops the queue with its archive without archiving or deleting its
-- messages one by one first (that would preserve nothing and lock queue rows before tasks).
-- Triggers on the queue's tables log any per-message archive or delete.
begin;
select plan(5);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b'))),
                                   pgflow.worker_protocol());
select pgflow.start_flow('f', '{}');
select pgflow.start_flow('f', '{}');

create table public.message_log (op text, msg_id bigint);
create function public.log_message() returns trigger language plpgsql as $$
begin
  insert into public.message_log values (tg_table_name || ':' || tg_op, coalesce(new.msg_id, old.msg_id));
  return null;
end $$;
create trigger log_archive after insert on pgmq.a_f for each row execute function public.log_message();
create trigger log_delete after delete on pgmq.q_f for each row execute function public.log_message();
select is((pgflow_tests.queue_counts('f')).active, 4::bigint, '(four active messages)');
select pgmq.archive('f', (select min(msg_id) from pgmq.q_f));
select results_eq($$select op from public.message_log order by op$$, $$values ('a_f:INSERT'), ('q_f:DELETE')$$,
                  '(the log sees a per-message archive)');
delete from public.message_log;

select lives_ok($$select pgflow.delete_flow_and_data('f')$$, 'the flow is deleted');
select is_empty($$select * from public.message_log$$, 'no message was archived or deleted individually');
select ok(to_regclass('pgmq.q_f') is null and to_regclass('pgmq.a_f') is null, 'the queue and its archive were dropped whole');

select * from finish();
rollback;
