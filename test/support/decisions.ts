// The reasons (`data.error`) DECISIONS §1 lists, by status, with those §13 adds (401
// signed_before_restart, 403 deprecated_secret) and §14 adds (403 out_of_scope): what the tests hold the error table and the API
// description to.
export const DECISIONS_REASONS: ReadonlyArray<readonly [number, ReadonlyArray<string>]> = [
  [400, [
    "invalid_parameter",
    "duplicate_wechat_number",
    "duplicate_phone",
    "duplicate_device_id",
    "duplicate_group_no",
    "has_associations",
    "has_members",
    "already_member",
    "already_associated",
    "account_disabled",
    "invalid_transition",
    "quota_full",
    "already_registered",
    "activity_not_open",
    "match_exists",
    "image_blacklisted",
    "unsupported_image",
    "batch_too_large"
  ]],
  [401, [
    "missing_credentials",
    "unknown_app_key",
    "app_key_disabled",
    "timestamp_out_of_window",
    "nonce_replayed",
    "invalid_signature",
    "signed_before_restart"
  ]],
  [403, ["permission_denied", "deprecated_secret", "out_of_scope"]],
  [404, ["not_found"]],
  [405, ["method_not_allowed"]],
  [409, ["task_locked", "idempotency_key_in_progress"]],
  [413, ["payload_too_large"]],
  [415, ["unsupported_media_type"]],
  [422, ["idempotency_key_reused"]],
  [429, ["rate_limited"]],
  [500, ["internal_error"]],
  [503, ["parser_unavailable", "service_unavailable"]]
]

/** The 400 row: bad input, or a rule of the domain refuses it. */
export const BAD_REQUEST_REASONS: ReadonlyArray<string> = DECISIONS_REASONS[0]![1]
