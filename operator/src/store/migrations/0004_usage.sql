-- Usage records, their rollups, feedback and model price overrides.
--
-- usage_logs holds one row per data-plane request, shipped by gateways (never written by them
-- directly). It is partitioned by day on created_at: the store creates a day's partition before
-- the first insert into it, and retention drops whole partitions. No DEFAULT partition, so a day's
-- partition can always be created later. The primary key includes the partition key; the record id
-- (a UUID minted by the gateway) together with its start time makes a retried batch a no-op.
CREATE TABLE usage_logs (
  id text NOT NULL,
  created_at timestamptz NOT NULL,
  organization_id text NOT NULL,
  workspace_id text,
  api_key_id text,
  user_id text,
  trace_id text NOT NULL,
  span_id text,
  parent_span_id text,
  span_name text,
  provider_id text,
  provider_slug text,
  provider_kind text,
  integration_id text,
  config_id text,
  deployment_id text,
  prompt_id text,
  route text NOT NULL,
  endpoint_type text NOT NULL,
  model_requested text,
  model_served text,
  attempts integer NOT NULL DEFAULT 0,
  retries integer NOT NULL DEFAULT 0,
  target_path text,
  status_code integer NOT NULL,
  error_code text,
  cache_status text,
  streamed boolean NOT NULL DEFAULT false,
  aborted boolean NOT NULL DEFAULT false,
  finish_reason text,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cached_input_tokens bigint NOT NULL DEFAULT 0,
  cache_write_input_tokens bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  estimated boolean NOT NULL DEFAULT false,
  cost_usd double precision,
  pricing_version text,
  latency_ms double precision NOT NULL,
  ttft_ms double precision,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  log_level text NOT NULL DEFAULT 'metadata',
  request_body jsonb,
  response_body jsonb,
  bodies_dropped boolean NOT NULL DEFAULT false,
  annotations jsonb NOT NULL DEFAULT '{}'::jsonb,
  ingested_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (created_at, id)
) PARTITION BY RANGE (created_at);

CREATE INDEX usage_logs_scope ON usage_logs (organization_id, workspace_id, created_at DESC);
CREATE INDEX usage_logs_trace ON usage_logs (trace_id);
CREATE INDEX usage_logs_id ON usage_logs (id);

-- Per-minute and per-hour sums by workspace, key, provider, model, config, prompt and status code,
-- written in the same transaction as the rows they count. Absent dimensions are '' (a primary
-- key cannot hold NULL). latency_hist counts requests per latency bin, sparse ({"bin": count};
-- store/histogram.ts: bin 0 below 1 ms, bin i in [1.1^(i-1), 1.1^i) ms), so percentiles come out
-- within 5 %.
CREATE TABLE usage_rollups (
  period text NOT NULL CHECK (period IN ('minute', 'hour')),
  bucket_start timestamptz NOT NULL,
  organization_id text NOT NULL,
  workspace_id text NOT NULL DEFAULT '',
  api_key_id text NOT NULL DEFAULT '',
  provider_id text NOT NULL DEFAULT '',
  provider_kind text NOT NULL DEFAULT '',
  model text NOT NULL DEFAULT '',
  config_id text NOT NULL DEFAULT '',
  prompt_id text NOT NULL DEFAULT '',
  status_code integer NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  cache_hits bigint NOT NULL DEFAULT 0,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  latency_ms_sum double precision NOT NULL DEFAULT 0,
  latency_hist jsonb NOT NULL DEFAULT '{}'::jsonb,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (period, organization_id, bucket_start, workspace_id, api_key_id, provider_id, provider_kind, model, config_id, prompt_id, status_code)
);

CREATE INDEX usage_rollups_workspace ON usage_rollups (period, organization_id, workspace_id, bucket_start);

-- Feedback on a request, by trace id (several requests may share one trace).
CREATE TABLE feedback (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  trace_id text NOT NULL CHECK (char_length(trace_id) BETWEEN 1 AND 256),
  value integer NOT NULL CHECK (value BETWEEN -10 AND 10),
  weight double precision NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 1),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  api_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX feedback_trace ON feedback (organization_id, trace_id);

-- Model price overrides on top of the gateway's shipped table, in USD per unit. Every change is a
-- new version; the newest version of each (workspace, provider, model) is the one compiled into the
-- snapshot, unless that version is a deletion.
CREATE TABLE model_prices (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
  -- A provider kind (`openai`) or a provider id.
  provider text NOT NULL CHECK (char_length(provider) BETWEEN 1 AND 255),
  model text NOT NULL CHECK (char_length(model) BETWEEN 1 AND 255),
  version integer NOT NULL CHECK (version >= 1),
  deleted boolean NOT NULL DEFAULT false,
  input double precision CHECK (input >= 0),
  output double precision CHECK (output >= 0),
  cached_input double precision CHECK (cached_input >= 0),
  cache_write double precision CHECK (cache_write >= 0),
  reasoning double precision CHECK (reasoning >= 0),
  per_image double precision CHECK (per_image >= 0),
  per_audio_second double precision CHECK (per_audio_second >= 0),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX model_prices_version ON model_prices (organization_id, COALESCE(workspace_id, ''), provider, model, version);
