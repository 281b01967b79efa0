-- pg-boss is gone: delivery jobs earlier versions left queued in it become entries of the claims table,
-- which is the only delivery queue now (0504).
--
-- Which jobs: those of the `messenger-delivery` queue not yet settled (created, retry, active) that carry
-- their update (queued before 0502, when claims did not keep bodies): their claim row has no body, so the
-- delivery loop, which takes only rows with one, would never deliver them. The update is copied into the
-- row's body and the row made due now; the loop then delivers it like any other, with the attempts the
-- row has counted (a job in the middle of an attempt when its process stopped is attempted again: at
-- least once). The body is the job's jsonb as text: the same JSON, spaced as PostgreSQL prints it, not
-- byte for byte what the platform sent (the job never held those bytes). Every other job needs nothing:
-- its update's row is its queue entry since 0504. A job whose connection or update is gone, or whose
-- update was delivered, is left.
--
-- pg-boss's schema is left as it is: the migration drops nothing it did not create, and the schema may
-- be shared with another application's pg-boss (it is pg-boss's default). Nothing in orgplane reads it
-- any more; an operator who knows no other application uses it can `DROP SCHEMA pgboss CASCADE`. Where
-- pg-boss never ran (a fresh install) there is no such schema, and this does nothing.

DO $$
DECLARE
  job record;
  organization text;
BEGIN
  IF to_regclass('pgboss.job') IS NULL THEN
    RETURN;
  END IF;
  FOR job IN
    SELECT data FROM pgboss.job
     WHERE name = 'messenger-delivery' AND state::text IN ('created', 'retry', 'active') AND data ? 'update'
  LOOP
    SELECT organization_id INTO organization FROM messenger_connections WHERE id = job.data->>'connectionId';
    CONTINUE WHEN organization IS NULL;
    UPDATE messenger_updates
       SET body = (job.data->'update')::text,
           order_key = COALESCE(order_key, CASE WHEN chat_id IS NOT NULL THEN 'chat:' || chat_id ELSE 'none' END),
           run_after = now(),
           leased_until = NULL
     WHERE organization_id = organization AND connection_id = job.data->>'connectionId'
       AND update_id = (job.data->>'updateId')::bigint
       AND status IN ('queued', 'retrying') AND body IS NULL;
  END LOOP;
END;
$$;
