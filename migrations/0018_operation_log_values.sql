-- Operation logs keep what a change altered as data (DECISIONS §13: masking reaches operation
-- logs whatever the value's shape): from_value and to_value become json, an update's changed
-- fields an object, a status or an id a JSON string. `json`, not `jsonb`: it keeps the text as
-- written, so an object's keys stay in the order the change named them and the answers shown
-- without masking stay what they were. The entries written so far are converted: an update's
-- values were the JSON text of the object, every other value plain text.

ALTER TABLE work_wechat_logs
  ALTER COLUMN from_value TYPE json USING (CASE WHEN action = 'update' THEN from_value::json ELSE to_json(from_value) END),
  ALTER COLUMN to_value TYPE json USING (CASE WHEN action = 'update' THEN to_value::json ELSE to_json(to_value) END);

ALTER TABLE work_group_logs
  ALTER COLUMN from_value TYPE json USING (CASE WHEN action = 'update' THEN from_value::json ELSE to_json(from_value) END),
  ALTER COLUMN to_value TYPE json USING (CASE WHEN action = 'update' THEN to_value::json ELSE to_json(to_value) END);
