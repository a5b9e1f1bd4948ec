-- Webhook attempt records name no address (DECISIONS §13): the error texts recorded before, the
-- system's own messages such as "ECONNREFUSED: connect ECONNREFUSED 10.0.0.5:8080", become the
-- fixed phrases recorded since (src/domain/webhooks.ts, ATTEMPT_ERRORS), and the kept start of an
-- answer is cut to at most 500 bytes (it was 500 characters). Running it again changes nothing.

UPDATE webhook_attempts SET error = CASE
    WHEN error ~ '^no answer within' OR error ~ '(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT)' THEN 'timed out'
    WHEN error ~ 'ECONNREFUSED' THEN 'connection refused'
    WHEN error ~ '(ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_SOCKET|other side closed)' THEN 'connection reset'
    WHEN error ~ '(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)' THEN 'host unreachable'
    WHEN error ~ '(ENOTFOUND|ENODATA|EAI_)' THEN 'DNS lookup failed'
    WHEN error ~ '(CERT|TLS|SSL)' THEN 'TLS error'
    WHEN error ~ 'HPE_' THEN 'invalid HTTP answer'
    ELSE 'connection failed'
  END
WHERE error IS NOT NULL
  -- Texts of the platform's own, which name no address.
  AND error NOT LIKE 'not sent: %'
  AND error NOT LIKE '410 Gone%'
  AND error <> 'the webhook URL is not http(s)'
  AND error NOT IN ('destination not allowed', 'DNS lookup failed', 'connection refused', 'connection reset', 'timed out',
    'host unreachable', 'TLS error', 'invalid HTTP answer', 'connection failed');

-- The longest start of the answer that fits in 500 bytes of UTF-8, cut between characters.
UPDATE webhook_attempts SET response = left(response, (
    SELECT max(n) FROM generate_series(0, char_length(response)) AS n WHERE octet_length(left(response, n)) <= 500
  ))
WHERE octet_length(response) > 500;
