/**
 * Reading usage logs: a page at a time with an opaque cursor (newest first, keyset on
 * created_at and id, so pages stay stable while records keep arriving), one log by id, and every
 * row of a filtered range for export.
 */
import { invalid } from '../errors.ts'
import type { SqlExecutor } from '../store/sql.ts'
import type { Conditions } from './filters.ts'

export interface LogRow {
  id: string
  created_at: Date
  organization_id: string
  workspace_id: string | null
  api_key_id: string | null
  user_id: string | null
  trace_id: string
  span_id: string | null
  parent_span_id: string | null
  span_name: string | null
  provider_id: string | null
  provider_slug: string | null
  provider_kind: string | null
  integration_id: string | null
  config_id: string | null
  deployment_id: string | null
  prompt_id: string | null
  prompt_version_id?: string | null
  mcp_server_id: string | null
  mcp_tool_name: string | null
  agent_server_id?: string | null
  agent_method?: string | null
  route: string
  endpoint_type: string
  model_requested: string | null
  model_served: string | null
  attempts: number
  retries: number
  target_path: string | null
  status_code: number
  error_code: string | null
  cache_status: string | null
  streamed: boolean
  aborted: boolean
  finish_reason: string | null
  input_tokens: number | string
  output_tokens: number | string
  cached_input_tokens: number | string
  cache_write_input_tokens: number | string
  reasoning_tokens: number | string
  audio_input_tokens: number | string
  cached_audio_input_tokens: number | string
  audio_output_tokens: number | string
  audio_seconds: number | null
  input_characters: number | string
  images: number | string
  image_input_tokens: number | string
  cache_saved_cost_usd: number | null
  estimated: boolean
  cost_usd: number | null
  pricing_version: string | null
  latency_ms: number
  ttft_ms: number | null
  metadata: Record<string, string>
  log_level: string
  request_body?: unknown
  response_body?: unknown
  bodies_dropped: boolean
  annotations?: Record<string, unknown>
}

/** Every column but the bodies (lists and exports without bodies stay light). */
const SUMMARY_COLUMNS = `id, created_at, organization_id, workspace_id, api_key_id, user_id, trace_id, span_id, parent_span_id, span_name,
  provider_id, provider_slug, provider_kind, integration_id, config_id, deployment_id, prompt_id, prompt_version_id, route, endpoint_type, model_requested,
  model_served, attempts, retries, target_path, status_code, error_code, cache_status, streamed, aborted, finish_reason, input_tokens,
  output_tokens, cached_input_tokens, cache_write_input_tokens, reasoning_tokens, audio_input_tokens, cached_audio_input_tokens,
  audio_output_tokens, audio_seconds, input_characters, images, image_input_tokens, estimated, cost_usd, cache_saved_cost_usd, pricing_version, latency_ms, ttft_ms,
  metadata, log_level, bodies_dropped, mcp_server_id, mcp_tool_name, agent_server_id, agent_method`

/** The log as the admin API shows it. */
export function logView(row: LogRow, bodies: boolean): Record<string, unknown> {
  const input = Number(row.input_tokens)
  const output = Number(row.output_tokens)
  const view: Record<string, unknown> = {
    id: row.id,
    object: 'log',
    created_at: new Date(row.created_at).toISOString(),
    organisation_id: row.organization_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    user: row.user_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    span_name: row.span_name,
    provider: row.provider_slug,
    provider_id: row.provider_id,
    ai_service: row.provider_kind,
    integration_id: row.integration_id,
    config_id: row.config_id,
    deployment_id: row.deployment_id,
    prompt_id: row.prompt_id,
    prompt_version_id: row.prompt_version_id ?? null,
    mcp_server_id: row.mcp_server_id,
    mcp_tool_name: row.mcp_tool_name,
    agent_server_id: row.agent_server_id ?? null,
    agent_method: row.agent_method ?? null,
    route: row.route,
    endpoint_type: row.endpoint_type,
    model_requested: row.model_requested,
    model: row.model_served ?? row.model_requested,
    attempts: row.attempts,
    retries: row.retries,
    target: row.target_path,
    status_code: row.status_code,
    is_success: row.status_code < 400,
    error_code: row.error_code,
    cache_status: row.cache_status,
    stream: row.streamed,
    aborted: row.aborted,
    finish_reason: row.finish_reason,
    usage: {
      input_tokens: input,
      output_tokens: output,
      cached_input_tokens: Number(row.cached_input_tokens),
      cache_write_input_tokens: Number(row.cache_write_input_tokens),
      reasoning_tokens: Number(row.reasoning_tokens),
      audio_input_tokens: Number(row.audio_input_tokens),
      cached_audio_input_tokens: Number(row.cached_audio_input_tokens),
      audio_output_tokens: Number(row.audio_output_tokens),
      audio_seconds: row.audio_seconds,
      input_characters: Number(row.input_characters),
      images: Number(row.images),
      image_input_tokens: Number(row.image_input_tokens),
      total_tokens: input + output,
      estimated: row.estimated,
    },
    cost: row.cost_usd,
    cost_currency: 'USD',
    cache_saved_cost: row.cache_saved_cost_usd,
    pricing_version: row.pricing_version,
    latency_ms: row.latency_ms,
    ttft_ms: row.ttft_ms,
    metadata: row.metadata,
    log_level: row.log_level,
    bodies_dropped: row.bodies_dropped,
  }
  if (bodies) {
    view.request = { body: row.request_body ?? null }
    view.response = { status: row.status_code, body: row.response_body ?? null, response_time: row.latency_ms }
  }
  return view
}

interface Cursor {
  at: string
  id: string
}

export function encodeCursor(row: Pick<LogRow, 'created_at' | 'id'>): string {
  return Buffer.from(JSON.stringify({ at: new Date(row.created_at).toISOString(), id: row.id })).toString('base64url')
}

export function decodeCursor(value: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<Cursor>
    if (typeof parsed.at === 'string' && typeof parsed.id === 'string' && !Number.isNaN(Date.parse(parsed.at))) return { at: parsed.at, id: parsed.id }
  } catch {
    // Reported below.
  }
  throw invalid('cursor', 'cursor is not one this API returned')
}

/** One page, newest first, after `cursor` when given. */
export async function listLogs(db: SqlExecutor, where: Conditions, limit: number, cursor: Cursor | null, bodies = false): Promise<{ rows: LogRow[]; nextCursor: string | null }> {
  const parts = [...where.parts]
  const params = [...where.params]
  if (cursor) {
    params.push(new Date(cursor.at), cursor.id)
    parts.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`)
  }
  params.push(limit + 1)
  const rows = await db.query<LogRow>(
    `SELECT ${SUMMARY_COLUMNS}${bodies ? ', request_body, response_body' : ''} FROM usage_logs WHERE ${parts.join(' AND ') || 'TRUE'}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  )
  const more = rows.length > limit
  const page = more ? rows.slice(0, limit) : rows
  return { rows: page, nextCursor: more ? encodeCursor(page.at(-1)!) : null }
}

export async function getLog(db: SqlExecutor, where: Conditions, id: string): Promise<LogRow | null> {
  const params = [...where.params, id]
  const [row] = await db.query<LogRow>(
    `SELECT ${SUMMARY_COLUMNS}, request_body, response_body, annotations FROM usage_logs WHERE ${where.sql} AND id = $${params.length} LIMIT 1`,
    params,
  )
  return row ?? null
}

/** The scalar columns of a CSV export, in order. */
export const CSV_COLUMNS = ['id', 'created_at', 'workspace_id', 'api_key_id', 'user', 'trace_id', 'provider', 'ai_service', 'config_id', 'route',
  'endpoint_type', 'model', 'status_code', 'error_code', 'cache_status', 'stream', 'input_tokens', 'output_tokens', 'total_tokens', 'estimated',
  'cost', 'pricing_version', 'latency_ms', 'ttft_ms', 'metadata'] as const

function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvLine(view: Record<string, unknown>): string {
  const usage = view.usage as Record<string, unknown>
  const flat: Record<string, unknown> = { ...view, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, total_tokens: usage.total_tokens, estimated: usage.estimated }
  return `${CSV_COLUMNS.map((column) => csvField(flat[column])).join(',')}\n`
}
