-- Enterprise sign-in: OpenID Connect sessions and SCIM 2.0 provisioning (issue #19).

-- SCIM attributes of a user: the IdP's userName (unique per organisation, case-insensitive per
-- RFC 7643 §4.1.1) and externalId. A user created by invite or the admin API has neither until
-- an identity provider links it.
ALTER TABLE users ADD COLUMN scim_user_name text;
ALTER TABLE users ADD COLUMN scim_external_id text;
CREATE UNIQUE INDEX users_scim_user_name ON users (organization_id, lower(scim_user_name)) WHERE scim_user_name IS NOT NULL;

-- A membership granted because the user is in a SCIM group mapped to the workspace; such rows are
-- added and removed as group membership changes, while memberships given by hand are left alone.
ALTER TABLE workspace_members ADD COLUMN granted_by_scim boolean NOT NULL DEFAULT false;

-- SCIM bearer tokens: HMAC-SHA256 with the key pepper, the raw token shown once.
CREATE TABLE scim_tokens (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  token_hash text NOT NULL UNIQUE,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

CREATE TABLE scim_groups (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 255),
  external_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scim_groups_display_name ON scim_groups (organization_id, lower(display_name));

CREATE TABLE scim_group_members (
  group_id text NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user ON scim_group_members (user_id);

-- SCIM group -> workspace with a role (GET/POST/DELETE /scim/workspaces). DELETE archives.
CREATE TABLE scim_workspace_mappings (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  group_id text NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'manager', 'member')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz
);
CREATE UNIQUE INDEX scim_workspace_mappings_active ON scim_workspace_mappings (workspace_id, group_id) WHERE status = 'active';

-- OIDC sign-in in progress: keyed by a hash of `state`; holds the nonce and PKCE verifier for at
-- most a few minutes and is deleted when the callback uses it.
CREATE TABLE sso_logins (
  state_hash text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Admin API sessions from SSO sign-in: an opaque token, stored as HMAC-SHA256 with the pepper.
CREATE TABLE sessions (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  started_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Subjects of deleted users: gateways keep refusing their still-unexpired JWTs (the IdP's word
-- alone would let them in) for a while after the user row is gone.
CREATE TABLE deleted_user_subjects (
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  subject text NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, subject)
);
