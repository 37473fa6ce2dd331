-- The organisation's guardrails (the spec's Org Guardrails): guardrails every workspace's requests
-- meet, as input (before the request) or output (on the answer) guardrails, in order. A deleted
-- guardrail leaves the list with its row.
CREATE TABLE organisation_guardrails (
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  guardrail_id text NOT NULL REFERENCES guardrails(id) ON DELETE CASCADE,
  hook text NOT NULL CHECK (hook IN ('input', 'output')),
  position integer NOT NULL CHECK (position >= 0),
  PRIMARY KEY (organization_id, hook, guardrail_id)
);

CREATE INDEX organisation_guardrails_guardrail ON organisation_guardrails (guardrail_id);
