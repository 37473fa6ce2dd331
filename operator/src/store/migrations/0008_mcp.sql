-- MCP (Model Context Protocol) integrations and servers, and the MCP fields of usage records.
-- Same conventions as 0001/0002 (text ids minted by the application, jsonb, timestamptz).

-- An MCP integration is an upstream MCP server registered by the organisation (or by one
-- workspace): where it is, how Gatehouse authenticates to it, what it offers (capabilities, read
-- by the sync), and which workspaces may create servers onto it.
CREATE TABLE mcp_integrations (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
  auth_type text NOT NULL CHECK (auth_type IN ('none', 'headers', 'oauth_client_credentials')),
  transport text NOT NULL CHECK (transport IN ('http', 'sse')),
  -- Non-secret settings (header names, OAuth token URL, client id, scope).
  configurations jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- AES-256-GCM envelope (crypto/envelope.ts), context `mcp_integration:<id>`: header values and the client secret.
  credentials_encrypted text,
  secret_mappings jsonb NOT NULL DEFAULT '[]'::jsonb,
  global_workspace_access jsonb NOT NULL DEFAULT '{"enabled": true}'::jsonb,
  workspace_access jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- What the server offers, from the last sync, each with the organisation's enabled flag.
  capabilities jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- The server's `initialize` answer, from the last successful sync.
  server_info jsonb,
  protocol_version text,
  capability_flags jsonb,
  sync_status text NOT NULL DEFAULT 'pending' CHECK (sync_status IN ('pending', 'success', 'failed')),
  sync_error text,
  last_synced_at timestamptz,
  -- A replica syncing this integration holds it until then (leader-free scheduling: one sync per due row).
  sync_claimed_until timestamptz,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  owner_id text,
  managed_by text CHECK (managed_by IS NULL OR managed_by IN ('kubernetes', 'file')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, slug)
);

-- An MCP server is a workspace's instance of an integration: the Gatehouse URL clients call,
-- with its own capability switches and per-user access.
CREATE TABLE mcp_servers (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  integration_id text NOT NULL REFERENCES mcp_integrations(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  -- [{name, type, enabled}]: switches on top of the integration's.
  capability_overrides jsonb NOT NULL DEFAULT '[]'::jsonb,
  default_user_access text NOT NULL DEFAULT 'allow' CHECK (default_user_access IN ('allow', 'deny')),
  -- [{user_id, enabled}]
  user_access jsonb NOT NULL DEFAULT '[]'::jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  owner_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, workspace_id, slug)
);
CREATE INDEX mcp_servers_integration ON mcp_servers (integration_id);

-- Agent (A2A) integrations and servers: the same shape, in tables of their own. `server_info`
-- holds the agent card, `capabilities` its skills (type `skill`).
CREATE TABLE agent_integrations (LIKE mcp_integrations INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE agent_integrations ADD PRIMARY KEY (id);
ALTER TABLE agent_integrations ADD UNIQUE (organization_id, slug);
ALTER TABLE agent_integrations ADD FOREIGN KEY (organization_id) REFERENCES organizations(id) ON DELETE CASCADE;
ALTER TABLE agent_integrations ADD FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE;

CREATE TABLE agent_servers (LIKE mcp_servers INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE agent_servers ADD PRIMARY KEY (id);
ALTER TABLE agent_servers ADD UNIQUE (organization_id, workspace_id, slug);
ALTER TABLE agent_servers ADD FOREIGN KEY (organization_id) REFERENCES organizations(id) ON DELETE CASCADE;
ALTER TABLE agent_servers ADD FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE;
ALTER TABLE agent_servers ADD FOREIGN KEY (integration_id) REFERENCES agent_integrations(id) ON DELETE CASCADE;
CREATE INDEX agent_servers_integration ON agent_servers (integration_id);

ALTER TABLE usage_logs ADD COLUMN mcp_server_id text;
ALTER TABLE usage_logs ADD COLUMN mcp_tool_name text;
