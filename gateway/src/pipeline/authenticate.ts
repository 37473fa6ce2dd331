/**
 * Authenticates a data-plane call against the keys in the current snapshot: syntax and checksum
 * first (no lookup for garbage), then HMAC-SHA256 with the pepper and one map lookup; keys already
 * verified against the current snapshot are recognised from a cheaper digest. Workspace
 * keys call the data plane; admin keys are refused with 403, as the spec's key model says.
 */
import { hash } from 'node:crypto'
import { GatewayError } from '../core/errors.ts'
import type { CompiledKey, RuntimeConfig } from '../runtime/compile.ts'
import { hashApiKey, parseApiKey } from '../snapshot/keys.ts'
import { header, type RequestHeaders } from '../core/headers.ts'

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-gateway-api-key'])
/** A name of another length is no credential header: most names are never lower-cased (this runs on every request). */
const CREDENTIAL_NAME_LENGTHS = new Set([...CREDENTIAL_HEADERS].map((name) => name.length))

/**
 * Refuses a request carrying a credential header twice. Node keeps only the first `Authorization`
 * (and joins repeated custom headers), so which credential "counts" would be an accident of
 * parsing; the raw header list (`request.raw.rawHeaders`: name, value, name, value...) shows them
 * all. One of each (`x-gateway-api-key` and `Authorization`) is fine: the explicit header wins.
 */
export function refuseRepeatedCredentials(rawHeaders: readonly string[]): void {
  const seen = new Set<string>()
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!
    if (!CREDENTIAL_NAME_LENGTHS.has(raw.length)) continue
    const name = raw.toLowerCase()
    if (!CREDENTIAL_HEADERS.has(name)) continue
    if (seen.has(name)) throw new GatewayError('invalid_header', `Send the '${name}' header once`, { param: name })
    seen.add(name)
  }
}

export function presentedKey(headers: RequestHeaders): string | undefined {
  const explicit = header(headers, 'x-gateway-api-key')
  if (explicit) return explicit
  const authorization = header(headers, 'authorization')
  if (authorization && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ') return authorization.slice(7).trim()
  return undefined
}

/**
 * Keys already verified against a runtime, by an unpeppered SHA-256 of the presented key: the
 * one-shot digest costs a quarter of the HMAC, and the checksum parse is skipped, on every request
 * after a key's first (auth was the gateway's largest own item in the benchmark's CPU profile).
 * The digest of a 192-bit random key is no more usable than the stored hashes; only keys that
 * passed the full check enter; a new snapshot (a revoked key) is a new runtime, so an empty cache.
 */
const verifiedKeys = new WeakMap<RuntimeConfig, { pepper: string; keys: Map<string, CompiledKey> }>()
/** Bounds memory against callers cycling through many valid keys; refilled on demand. */
const MAX_VERIFIED_KEYS = 10_000

function verifiedKey(runtime: RuntimeConfig, raw: string, pepper: string): CompiledKey | undefined {
  const digest = hash('sha256', raw, 'base64')
  let cache = verifiedKeys.get(runtime)
  // A key verified under one pepper says nothing under another (the pepper is fixed per process).
  if (cache?.pepper === pepper) {
    const cached = cache.keys.get(digest)
    if (cached) return cached
  }
  if (!parseApiKey(raw)) return undefined
  const key = runtime.keysByHash.get(hashApiKey(raw, pepper))
  if (!key) return undefined
  if (cache?.pepper !== pepper) {
    cache = { pepper, keys: new Map() }
    verifiedKeys.set(runtime, cache)
  }
  if (cache.keys.size >= MAX_VERIFIED_KEYS) cache.keys.clear()
  cache.keys.set(digest, key)
  return key
}

export function authenticateKey(runtime: RuntimeConfig, raw: string | undefined, pepper: string, nowMs: number): CompiledKey {
  if (!raw) {
    throw new GatewayError('missing_api_key', 'Provide a Gatehouse API key in x-gateway-api-key or Authorization: Bearer')
  }
  const key = verifiedKey(runtime, raw, pepper)
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
