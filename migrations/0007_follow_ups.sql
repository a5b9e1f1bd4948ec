-- Follow-up plans and their daily tasks (SPEC §2.6, §3.1, §4.5; DECISIONS §5, §7): the work queue
-- external matching systems list, lock (dispatch), and report on.

-- A plan: a guest, the matchmaker the guest had when the plan was made, a task type, a start
-- date and the day numbers (day 1 = the start date). `next_date` is the earliest scheduled date
-- not yet generated (null once every day has its task), so the daemon reads only the plans that
-- are due instead of every plan ever made.
CREATE TABLE follow_up_plans (
  id            bigserial PRIMARY KEY,
  guest_id      bigint NOT NULL REFERENCES guests (id),
  matchmaker_id bigint REFERENCES matchmakers (id),
  task_type     text NOT NULL CHECK (task_type IN ('recommend', 'revisit', 'reactivate')),
  start_date    date NOT NULL,
  days          integer[] NOT NULL CHECK (cardinality(days) > 0 AND 0 < ALL (days)),
  next_date     date,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX follow_up_plans_due_idx ON follow_up_plans (next_date, id) WHERE next_date IS NOT NULL;
CREATE INDEX follow_up_plans_start_idx ON follow_up_plans (start_date);
CREATE INDEX follow_up_plans_guest_idx ON follow_up_plans (guest_id, id);

-- A task: one plan day. The unique key (plan_id, task_day) makes generation exactly-once however
-- many daemons and admin runs insert it (INSERT … ON CONFLICT DO NOTHING, never check-then-insert).
-- company_id and matchmaker_id are copied at generation so the list filters and joins stay on
-- this table's indexes.
CREATE TABLE follow_up_tasks (
  id               bigserial PRIMARY KEY,
  plan_id          bigint NOT NULL REFERENCES follow_up_plans (id),
  guest_id         bigint NOT NULL REFERENCES guests (id),
  company_id       bigint NOT NULL REFERENCES companies (id),
  matchmaker_id    bigint REFERENCES matchmakers (id),
  task_type        text NOT NULL CHECK (task_type IN ('recommend', 'revisit', 'reactivate')),
  task_day         integer NOT NULL CHECK (task_day > 0),
  scheduled_date   date NOT NULL,
  status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'dispatched', 'completed', 'failed', 'skipped')),
  -- The lock: the holder's app_key and when it was taken (the lease runs from here).
  dispatched_to    text,
  dispatched_at    timestamptz,
  -- Results: complete, fail and skip each store theirs.
  matched_guest_id bigint REFERENCES guests (id),
  match_score      double precision CHECK (match_score BETWEEN 0 AND 100),
  share_link       text,
  share_channel    text,
  extra            jsonb,
  error_code       text,
  error_msg        text,
  skip_reason      text,
  finished_at      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT follow_up_tasks_plan_day_key UNIQUE (plan_id, task_day),
  -- A dispatched, completed or failed task has a holder; a skipped one may never have been dispatched.
  CHECK (status IN ('pending', 'skipped') OR dispatched_to IS NOT NULL)
);
-- The list (a work queue: scheduled_date, then id) filters by date and status always, and by
-- task_type or company_id when given: each filter leads an index in the list's order.
CREATE INDEX follow_up_tasks_queue_idx ON follow_up_tasks (scheduled_date, status, id);
CREATE INDEX follow_up_tasks_type_idx ON follow_up_tasks (task_type, scheduled_date, status, id);
CREATE INDEX follow_up_tasks_company_idx ON follow_up_tasks (company_id, scheduled_date, status, id);
-- Stale locks (status dispatched, lease run out) are listed as pending; they are found per date.
CREATE INDEX follow_up_tasks_dispatched_idx ON follow_up_tasks (scheduled_date, dispatched_at) WHERE status = 'dispatched';
CREATE INDEX follow_up_tasks_guest_idx ON follow_up_tasks (guest_id);
CREATE INDEX follow_up_tasks_matched_guest_idx ON follow_up_tasks (matched_guest_id) WHERE matched_guest_id IS NOT NULL;
