-- Idempotent retries kept in the transaction of the endpoint's writes (DECISIONS §11): a key's row
-- is claimed, answered and committed together with what the request wrote, so a committed row
-- always holds its answer and a running first attempt is an uncommitted row (a crash rolls it
-- back). The lease of a running attempt and the state column go; rows left running by the former
-- scheme (an instance that died mid-request) are freed.

DELETE FROM idempotency_keys WHERE state = 'running' OR response_status IS NULL;
ALTER TABLE idempotency_keys DROP COLUMN lease_until, DROP COLUMN state;
