-- Incremental sync of the lists (DECISIONS §12): `updated_since` and `cursor` read in ascending
-- (updated_at, id) order, and a page after a cursor must cost the same at any depth. So:
--
-- 1. updated_at moves on every change of a listed record, whoever writes it (counters moved by
--    other aggregates' writes included): a BEFORE UPDATE trigger sets it to now() (the
--    transaction's time, as the repositories' own `updated_at = now()`) whenever the row changes
--    and the statement did not set updated_at itself.
-- 2. An index on (updated_at, id) per list (partial on live rows where the list shows only those),
--    and on the sync key of the lists under one parent (logs and group members are never updated:
--    created_at / joined_at is their updated_at).
-- 3. A group shows its member counts: adding or removing members moves the group's updated_at.
-- 4. Associations move between accounts (a transfer): they gain updated_at (their created_at so
--    far), kept by the same trigger, so a moved association is new to its new account's list.

CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at AND NEW IS DISTINCT FROM OLD THEN
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER guests_touch BEFORE UPDATE ON guests FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER matchmakers_touch BEFORE UPDATE ON matchmakers FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER companies_touch BEFORE UPDATE ON companies FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER work_wechats_touch BEFORE UPDATE ON work_wechats FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER work_groups_touch BEFORE UPDATE ON work_groups FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER activities_touch BEFORE UPDATE ON activities FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER matches_touch BEFORE UPDATE ON matches FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER memberships_touch BEFORE UPDATE ON memberships FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER follow_up_tasks_touch BEFORE UPDATE ON follow_up_tasks FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
ALTER TABLE work_wechat_associations ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
UPDATE work_wechat_associations SET updated_at = created_at;
CREATE TRIGGER work_wechat_associations_touch BEFORE UPDATE ON work_wechat_associations
  FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER image_blacklist_touch BEFORE UPDATE ON image_blacklist FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

CREATE OR REPLACE FUNCTION touch_member_groups() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE work_groups SET updated_at = now() WHERE id IN (SELECT work_group_id FROM changed) AND updated_at <> now();
  RETURN NULL;
END
$$;
CREATE TRIGGER work_group_matchmakers_added AFTER INSERT ON work_group_matchmakers
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION touch_member_groups();
CREATE TRIGGER work_group_matchmakers_removed AFTER DELETE ON work_group_matchmakers
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION touch_member_groups();
CREATE TRIGGER work_group_work_wechats_added AFTER INSERT ON work_group_work_wechats
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION touch_member_groups();
CREATE TRIGGER work_group_work_wechats_removed AFTER DELETE ON work_group_work_wechats
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION touch_member_groups();

-- guests already has guests_updated_idx (updated_at, id) from 0002.
CREATE INDEX matchmakers_sync_idx ON matchmakers (updated_at, id);
CREATE INDEX companies_sync_idx ON companies (updated_at, id);
CREATE INDEX work_wechats_sync_idx ON work_wechats (updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX work_groups_sync_idx ON work_groups (updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX activities_sync_idx ON activities (updated_at, id);
CREATE INDEX matches_sync_idx ON matches (updated_at, id);
CREATE INDEX memberships_sync_idx ON memberships (updated_at, id);
CREATE INDEX follow_up_tasks_sync_idx ON follow_up_tasks (updated_at, id);
CREATE INDEX image_blacklist_sync_idx ON image_blacklist (updated_at, id);
CREATE INDEX webhook_deliveries_sync_idx ON webhook_deliveries (client_id, updated_at, id);
CREATE INDEX work_wechat_logs_sync_idx ON work_wechat_logs (work_wechat_id, created_at, id);
CREATE INDEX work_group_logs_sync_idx ON work_group_logs (work_group_id, created_at, id);
CREATE INDEX work_wechat_associations_sync_idx ON work_wechat_associations (work_wechat_id, updated_at, id);
CREATE INDEX work_group_matchmakers_sync_idx ON work_group_matchmakers (work_group_id, joined_at, id);
CREATE INDEX work_group_work_wechats_sync_idx ON work_group_work_wechats (work_group_id, joined_at, id);
