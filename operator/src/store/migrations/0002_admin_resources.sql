-- Admin resources beyond keys and workspaces: integrations, secret references, config versions,
-- guardrails, deployments, usage/rate-limit policies. Same conventions as 0001 (text ids minted by
-- the application, jsonb, timestamptz). Names and slugs are at most 255 characters (the spec's limit).

-- An integration is an organisation's (or one workspace's) account at a model provider: the
-- credential, its configuration, which models and which workspaces may use it. Providers
-- (formerly virtual keys) are workspace handles onto an integration or carry their own credential.
CREATE TABLE integrations (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  -- The provider family (`openai`, `anthropic`, `bedrock`, ...).
  kind text NOT NULL,
  description text,
  base_url text,
  -- AES-256-GCM envelope (crypto/envelope.ts), context `integration:<id>`.
  credentials_encrypted text,
  -- Non-secret settings under the gateway's option names (region, apiVersion, ...).
  options jsonb NOT NULL DEFAULT '{}'::jsonb,
  secret_mappings jsonb NOT NULL DEFAULT '[]'::jsonb,
  tags jsonb NOT NULL DEFAULT '{}'::jsonb,
  allow_all_models boolean NOT NULL DEFAULT true,
  models jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Workspace access: everyone (global), or the listed workspaces with per-workspace limits.
  global_workspace_access jsonb NOT NULL DEFAULT '{"enabled": true}'::jsonb,
  workspace_access jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

ALTER TABLE providers ADD COLUMN integration_id text REFERENCES integrations(id) ON DELETE CASCADE;
ALTER TABLE providers ADD COLUMN note text;
ALTER TABLE providers ADD COLUMN secret_mappings jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE providers ADD COLUMN usage_limits jsonb;
ALTER TABLE providers ADD COLUMN rate_limits jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE providers ADD COLUMN expires_at timestamptz;
CREATE INDEX providers_integration ON providers (integration_id);

-- Where a secret lives (an environment variable of the control plane, a Kubernetes Secret key),
-- never the secret itself. Credential fields of integrations and providers map onto them.
CREATE TABLE secret_references (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  manager_type text NOT NULL CHECK (manager_type IN ('environment', 'kubernetes')),
  secret_path text NOT NULL CHECK (char_length(secret_path) BETWEEN 1 AND 1024),
  secret_key text CHECK (secret_key IS NULL OR char_length(secret_key) BETWEEN 1 AND 255),
  allow_all_workspaces boolean NOT NULL DEFAULT true,
  allowed_workspace_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  tags jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

-- Every write of a config is a version; `configs` keeps the current one.
CREATE TABLE config_versions (
  id text PRIMARY KEY,
  config_id text NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  name text NOT NULL,
  config jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (config_id, version)
);
-- Configs written before versions were kept get their current version as the first entry.
INSERT INTO config_versions (id, config_id, version, name, config, created_at)
  SELECT 'v-' || id, id, version, name, config, updated_at FROM configs;

CREATE TABLE guardrails (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  checks jsonb NOT NULL,
  actions jsonb NOT NULL,
  hooks jsonb NOT NULL DEFAULT '["beforeRequestHook"]'::jsonb,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  version_id text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

-- A deployment: a named gateway deployment (production or non-production) serving a config to
-- all workspaces or to the listed ones.
CREATE TABLE deployments (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  type text NOT NULL CHECK (type IN ('production', 'non-production')),
  config_id text REFERENCES configs(id) ON DELETE SET NULL,
  allow_all_workspaces boolean NOT NULL DEFAULT true,
  allowed_workspace_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

-- Usage-limit (budget) and rate-limit policies share conditions and group_by.
CREATE TABLE policies (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('usage_limits', 'rate_limits')),
  name text CHECK (name IS NULL OR char_length(name) BETWEEN 1 AND 255),
  conditions jsonb NOT NULL,
  group_by jsonb NOT NULL,
  type text NOT NULL CHECK (type IN ('requests', 'tokens', 'cost')),
  -- rate limits
  unit text CHECK (unit IS NULL OR unit IN ('rpm', 'rph', 'rpd', 'rpw')),
  value numeric CHECK (value IS NULL OR value >= 0),
  -- usage limits
  credit_limit numeric CHECK (credit_limit IS NULL OR credit_limit >= 0),
  alert_threshold numeric CHECK (alert_threshold IS NULL OR alert_threshold >= 0),
  periodic_reset text CHECK (periodic_reset IS NULL OR periodic_reset IN ('weekly', 'monthly')),
  periodic_reset_days integer CHECK (periodic_reset_days IS NULL OR periodic_reset_days BETWEEN 1 AND 365),
  next_usage_reset_at timestamptz,
  last_reset_at timestamptz,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'rate_limits') = (unit IS NOT NULL AND value IS NOT NULL)),
  CHECK ((kind = 'usage_limits') = (credit_limit IS NOT NULL))
);
CREATE INDEX policies_kind ON policies (organization_id, kind, status);

-- Usage counted per policy and value key (the group_by combination), written by accounting.
CREATE TABLE policy_usage (
  policy_id text NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
  value_key text NOT NULL,
  current_usage numeric NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'exhausted')),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (policy_id, value_key)
);
