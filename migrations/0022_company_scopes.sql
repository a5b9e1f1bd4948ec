-- Company-scoped clients (DECISIONS §14). An operator binds a client to companies
-- (`clients scope APP_KEY --companies ID,...`); `scoped` says the binding is on, so a client whose
-- companies are all gone sees nothing rather than everything. Changes reach every API instance's
-- client cache at commit through `clients_changed`, like any change of the client's row.
ALTER TABLE clients ADD COLUMN scoped boolean NOT NULL DEFAULT false;

CREATE TABLE client_companies (
  client_id  bigint NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  company_id bigint NOT NULL REFERENCES companies (id),
  PRIMARY KEY (client_id, company_id)
);
CREATE INDEX client_companies_company_idx ON client_companies (company_id);

CREATE FUNCTION client_companies_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('clients_changed', c.app_key)
  FROM clients c
  WHERE c.id IN (SELECT client_id FROM changed);
  RETURN NULL;
END
$$;
CREATE TRIGGER client_companies_added AFTER INSERT ON client_companies
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION client_companies_notify();
CREATE TRIGGER client_companies_removed AFTER DELETE ON client_companies
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION client_companies_notify();

-- The companies an event belongs to, derived from its payload (the record as its read endpoint
-- shows it) when it is recorded, in the same statement: the feed and the webhook fan-out filter a
-- scoped client's events by it. Matches belong to both guests' companies; memberships to their
-- guest's; an activity's registration to the activity's. Work WeChat accounts and groups are
-- platform-wide (no company: in no scope); `webhook.test` names its client instead.
CREATE FUNCTION event_company_ids(p_type text, p_data jsonb) RETURNS bigint[] LANGUAGE plpgsql STABLE AS $$
DECLARE
  resource text := split_part(p_type, '.', 1);
  ids bigint[];
BEGIN
  IF resource = 'company' THEN
    ids := ARRAY[(p_data->>'id')::bigint];
  ELSIF p_type = 'guest.card_created' THEN
    SELECT array_agg(g.company_id) INTO ids FROM guests g WHERE g.id = (p_data->>'guest_id')::bigint;
  ELSIF p_type = 'activity.registered' THEN
    SELECT array_agg(a.company_id) INTO ids FROM activities a WHERE a.id = (p_data->>'activity_id')::bigint;
  ELSIF resource IN ('guest', 'matchmaker', 'activity', 'follow_up') THEN
    ids := CASE WHEN p_data->>'company_id' IS NULL THEN NULL ELSE ARRAY[(p_data->>'company_id')::bigint] END;
  ELSIF resource = 'match' THEN
    SELECT array_agg(DISTINCT g.company_id) INTO ids FROM guests g
    WHERE g.id IN ((p_data->>'guest_a_id')::bigint, (p_data->>'guest_b_id')::bigint);
  ELSIF resource = 'membership' THEN
    SELECT array_agg(g.company_id) INTO ids FROM guests g WHERE g.id = (p_data->>'guest_id')::bigint;
  END IF;
  RETURN COALESCE(ids, '{}');
END
$$;

ALTER TABLE events ADD COLUMN company_ids bigint[] NOT NULL DEFAULT '{}';
UPDATE events SET company_ids = event_company_ids(type, data) WHERE client_id IS NULL;

CREATE FUNCTION events_company_ids() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.client_id IS NULL THEN
    NEW.company_ids := event_company_ids(NEW.type, NEW.data);
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER events_company_ids BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_company_ids();

-- A scoped client is sent only its companies' events.
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (event_id, client_id, next_attempt_at)
  SELECT e.id, c.id, now()
  FROM new_events e
  JOIN clients c ON c.webhook_enabled AND c.status = 'active' AND c.webhook_url IS NOT NULL
    AND e.type = ANY (c.webhook_events) AND e.permission = ANY (c.permissions)
  WHERE e.client_id IS NULL
    AND (NOT c.scoped OR EXISTS (
      SELECT 1 FROM client_companies cc WHERE cc.client_id = c.id AND cc.company_id = ANY (e.company_ids)))
  ON CONFLICT (event_id, client_id) DO NOTHING;
  IF FOUND THEN
    -- A payload is needed: listeners of @effect/sql-pg drop notifications with an empty one.
    PERFORM pg_notify('webhook_deliveries', 'due');
  END IF;
  RETURN NULL;
END
$$;
