-- Matches between two guests (SPEC §2.10, DECISIONS §5): the table the match endpoints, the
-- matchmaker counters and the follow-up task detail (history_match_count) read.

CREATE TABLE matches (
  id                    bigserial PRIMARY KEY,
  guest_a_id            bigint NOT NULL REFERENCES guests (id),
  guest_b_id            bigint NOT NULL REFERENCES guests (id),
  guest_a_matchmaker_id bigint REFERENCES matchmakers (id),
  guest_b_matchmaker_id bigint REFERENCES matchmakers (id),
  match_score           numeric(5, 2) NOT NULL DEFAULT 0 CHECK (match_score BETWEEN 0 AND 100),
  status                text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'pending_date', 'dating', 'completed', 'rejected', 'closed')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CHECK (guest_a_id <> guest_b_id)
);
-- One open match per pair, in either order (DECISIONS §5: a second one is 400 match_exists).
CREATE UNIQUE INDEX matches_open_pair_key ON matches (least(guest_a_id, guest_b_id), greatest(guest_a_id, guest_b_id))
  WHERE status IN ('pending', 'pending_date', 'dating');
-- List filters: a guest on either side, status, created_at range (newest first).
CREATE INDEX matches_guest_a_idx ON matches (guest_a_id, id DESC);
CREATE INDEX matches_guest_b_idx ON matches (guest_b_id, id DESC);
CREATE INDEX matches_status_idx ON matches (status, id DESC);
CREATE INDEX matches_created_idx ON matches (created_at, id DESC);
CREATE INDEX matches_matchmaker_a_idx ON matches (guest_a_matchmaker_id);
CREATE INDEX matches_matchmaker_b_idx ON matches (guest_b_matchmaker_id);
