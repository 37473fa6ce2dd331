-- Gatehouse admin store, first schema. One dialect for PostgreSQL and PGlite.
-- Identifiers are UUID strings minted by the application (text, so both backends and the snapshot
-- agree on their form). JSON columns are jsonb. Time is timestamptz.

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  -- session_settings, security_settings, api_key_settings (see identity/settings.ts)
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email text NOT NULL,
  first_name text,
  last_name text,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  -- The `sub` of the identity provider, for JWT sign-in.
  external_subject text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, email)
);
CREATE UNIQUE INDEX users_external_subject ON users (organization_id, external_subject) WHERE external_subject IS NOT NULL;

CREATE TABLE workspaces (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  defaults jsonb NOT NULL DEFAULT '{}'::jsonb,
  usage_limits jsonb NOT NULL DEFAULT '[]'::jsonb,
  rate_limits jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Workspace overrides of organisation settings (user key limits, security settings).
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  next_usage_reset_at timestamptz,
  last_reset_at timestamptz,
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

CREATE TABLE workspace_members (
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'manager', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members (user_id);

CREATE TABLE invites (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  workspaces jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'cancelled', 'accepted', 'expired')),
  invited_by text,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  user_id text REFERENCES users(id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('admin', 'workspace')),
  subtype text NOT NULL CHECK (subtype IN ('service', 'user')),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  -- HMAC-SHA256(pepper, raw key), hex. The raw key is never stored.
  key_hash text NOT NULL UNIQUE,
  -- Non-secret display hint (type prefix and last four characters).
  key_hint text NOT NULL,
  -- During a rotation transition the previous secret stays valid until previous_key_expires_at.
  previous_key_hash text UNIQUE,
  previous_key_hint text,
  previous_key_expires_at timestamptz,
  scopes jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'exhausted', 'expired', 'revoked')),
  expires_at timestamptz,
  rotation_policy jsonb,
  next_rotation_at timestamptz,
  last_rotated_at timestamptz,
  usage_limits jsonb,
  rate_limits jsonb,
  defaults jsonb NOT NULL DEFAULT '{}'::jsonb,
  alert_emails jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_reset_at timestamptz,
  creation_mode text NOT NULL DEFAULT 'api' CHECK (creation_mode IN ('ui', 'api', 'auto')),
  created_by text,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'workspace') = (workspace_id IS NOT NULL)),
  CHECK ((subtype = 'user') = (user_id IS NOT NULL))
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);
CREATE INDEX api_keys_expiry ON api_keys (expires_at) WHERE status = 'active';
CREATE INDEX api_keys_rotation ON api_keys (next_rotation_at) WHERE status = 'active';

CREATE TABLE audit_log (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system', 'anonymous')),
  actor_id text,
  user_id text,
  workspace_id text,
  method text,
  uri text,
  request_id text,
  action text NOT NULL,
  resource_type text,
  resource_id text,
  response_status_code integer,
  client_ip text,
  -- Redacted copies: secrets, keys and hashes are removed before they get here.
  request_body jsonb,
  query_params jsonb,
  details jsonb
);
CREATE INDEX audit_log_time ON audit_log (organization_id, occurred_at DESC);

CREATE TABLE providers (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  kind text NOT NULL,
  base_url text,
  -- AES-256-GCM envelope from crypto/envelope.ts; names the key id so the key can rotate.
  credentials_encrypted text,
  options jsonb NOT NULL DEFAULT '{}'::jsonb,
  tags jsonb NOT NULL DEFAULT '{}'::jsonb,
  allow_all_workspaces boolean NOT NULL DEFAULT true,
  allowed_workspace_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  models jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (organization_id, workspace_id, slug)
);

CREATE TABLE configs (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  config jsonb NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (organization_id, workspace_id, slug)
);
