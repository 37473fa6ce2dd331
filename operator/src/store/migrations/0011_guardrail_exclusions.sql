-- Workspaces exempted from the organisation's guardrails (the spec's `organisation_exclusions`
-- scopes): requests of a workspace listed here meet only its own defaults and its configs'
-- guardrails, never the organisation's. A deleted workspace leaves the list with its row.
CREATE TABLE organisation_guardrail_exclusions (
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, workspace_id)
);

CREATE INDEX organisation_guardrail_exclusions_workspace ON organisation_guardrail_exclusions (workspace_id);
