-- E-mail notifications (usage-limit threshold and exhausted alerts, API key rotation and expiry
-- notices). One row per notification, keyed by what it is about (`dedupe_key`: the subject, the
-- period or date it concerns, and the limit value it was measured against), so a notification is
-- sent once however many control-plane replicas or worker runs see the same state, and raising a
-- credit limit or threshold (a new key) re-arms the alert. Failed sends are retried with backoff
-- (`next_attempt_at`); `not_sent` records a notification that had no SMTP server to go to.
CREATE TABLE notifications (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('usage_threshold', 'usage_exhausted', 'key_rotation_upcoming', 'key_rotation_completed', 'key_expiry_warning')),
  dedupe_key text NOT NULL,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  recipients jsonb NOT NULL DEFAULT '[]'::jsonb,
  message_subject text NOT NULL,
  message_text text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'not_sent')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  next_attempt_at timestamptz,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, dedupe_key)
);
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status IN ('pending', 'failed');

-- Leases of singleton background workers (the reset and alert worker): one holder at a time,
-- taken or renewed by compare-and-set, so any number of control-plane replicas may run the loop.
CREATE TABLE worker_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
