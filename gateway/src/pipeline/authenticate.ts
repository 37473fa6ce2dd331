/**
 * Authenticates a data-plane call against the keys in the current snapshot: syntax and checksum
 * first (no lookup for garbage), then HMAC-SHA256 with the pepper and one map lookup. Workspace
 * keys call the data plane; admin keys are refused with 403, as the spec's key model says.
 */
import { GatewayError } from '../errors.ts'
import type { CompiledKey, RuntimeConfig } from '../runtime/compile.ts'
import { hashApiKey, parseApiKey } from '../snapshot/keys.ts'
import { header, type RequestHeaders } from './context.ts'

export function presentedKey(headers: RequestHeaders): string | undefined {
  const explicit = header(headers, 'x-gateway-api-key')
  if (explicit) return explicit
  const authorization = header(headers, 'authorization')
  if (authorization && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ') return authorization.slice(7).trim()
  return undefined
}

export function authenticateKey(runtime: RuntimeConfig, raw: string | undefined, pepper: string, nowMs: number): CompiledKey {
  if (!raw) {
    throw new GatewayError('missing_api_key', 'Provide a Gatehouse API key in x-gateway-api-key or Authorization: Bearer')
  }
  if (!parseApiKey(raw)) throw new GatewayError('invalid_api_key', 'The API key is not valid')
  const key = runtime.keysByHash.get(hashApiKey(raw, pepper))
  if (!key) throw new GatewayError('invalid_api_key', 'The API key is not valid')
  if (key.expiresAtMs !== null && key.expiresAtMs <= nowMs) throw new GatewayError('expired_api_key', 'The API key has expired')
  return key
}

export function requireDataPlaneKey(key: CompiledKey, runtime: RuntimeConfig): string {
  if (key.record.type !== 'workspace' || key.record.workspaceId === null) {
    throw new GatewayError('admin_key_on_data_plane', 'Admin API keys manage Gatehouse; use a workspace API key to call models')
  }
  const workspace = runtime.workspaces.get(key.record.workspaceId)
  if (!workspace || workspace.status !== 'active') {
    throw new GatewayError('forbidden', 'The API key belongs to a workspace that is not active')
  }
  return workspace.id
}
