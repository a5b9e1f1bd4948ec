-- Secrets at rest (DECISIONS §13): the answers kept for Idempotency-Keys are sealed (AES-256-GCM,
-- bound to their app_key and key, src/auth/SecretBox.ts) in `response_sealed`, as text like every
-- sealed value (`v2:<kid>:...`). `response_body` only holds answers kept in plain bytes before this
-- migration: they are still replayed until they expire (24 h) or `keys rotate` seals them, except
-- those that carry a secret (a rotation's `app_secret`, a webhook's `signing_secret`), which are
-- removed now: a retry of such a request within the day runs again, as it would after the window.

ALTER TABLE idempotency_keys
  ADD COLUMN response_sealed text,
  ADD CONSTRAINT idempotency_keys_one_body CHECK (response_body IS NULL OR response_sealed IS NULL);

DELETE FROM idempotency_keys
WHERE position('"app_secret"'::bytea IN response_body) > 0
   OR position('"signing_secret"'::bytea IN response_body) > 0;
