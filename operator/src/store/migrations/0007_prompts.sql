-- Prompts (issue #18): collections, prompt templates with immutable versions, labels that move
-- between versions, and partials with their own versions. Every prompt, partial and collection
-- belongs to one workspace. Labels are organisation- or workspace-wide; the universal labels
-- (production, staging, development) belong to no organisation and are seeded here.
CREATE TABLE prompt_collections (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  parent_collection_id text REFERENCES prompt_collections(id) ON DELETE CASCADE,
  is_default boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, slug)
);
-- One default collection per workspace.
CREATE UNIQUE INDEX prompt_collections_default ON prompt_collections (workspace_id) WHERE is_default;

CREATE TABLE prompt_labels (
  id text PRIMARY KEY,
  organization_id text REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text,
  color_code text,
  is_universal boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (organization_id, workspace_id, name)
);

INSERT INTO prompt_labels (id, name, description, color_code, is_universal) VALUES
  ('00000000-0000-4000-8000-00000000a001', 'production', 'Serves production traffic', '#16a34a', true),
  ('00000000-0000-4000-8000-00000000a002', 'staging', 'Serves staging traffic', '#ca8a04', true),
  ('00000000-0000-4000-8000-00000000a003', 'development', 'Serves development traffic', '#2563eb', true);

CREATE TABLE prompts (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  collection_id text NOT NULL REFERENCES prompt_collections(id) ON DELETE CASCADE,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  -- The provider (virtual key) slug completions go to when the request names none.
  virtual_key text,
  -- The published version; set on create and moved by makeDefault.
  default_version_id text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, slug)
);

-- Versions are immutable: only label_id and status ever change (see repos/prompts.ts).
CREATE TABLE prompt_versions (
  id text PRIMARY KEY,
  prompt_id text NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  template text NOT NULL,
  parameters jsonb NOT NULL DEFAULT '{}'::jsonb,
  model text,
  functions jsonb,
  tools jsonb,
  tool_choice jsonb,
  template_metadata jsonb,
  is_raw_template boolean NOT NULL DEFAULT false,
  description text,
  label_id text REFERENCES prompt_labels(id) ON DELETE SET NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (prompt_id, version)
);
-- A label marks at most one version of a prompt: setting it on one moves it off the other.
CREATE UNIQUE INDEX prompt_versions_label ON prompt_versions (prompt_id, label_id) WHERE label_id IS NOT NULL;

CREATE TABLE prompt_partials (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  collection_id text REFERENCES prompt_collections(id) ON DELETE SET NULL,
  slug text NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 255),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  default_version_id text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, slug),
  UNIQUE (workspace_id, name)
);

CREATE TABLE prompt_partial_versions (
  id text PRIMARY KEY,
  partial_id text NOT NULL REFERENCES prompt_partials(id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  template text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (partial_id, version)
);

-- The usage record names the prompt version a completion rendered (prompt_id exists since 0004).
ALTER TABLE usage_logs ADD COLUMN prompt_version_id text;
