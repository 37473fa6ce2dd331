/**
 * OAuth 2.0 access tokens for signers that exchange a credential for a short-lived token (Google
 * service accounts, Microsoft Entra ID client credentials): one form POST to a token endpoint, and
 * a cache that reuses a token until shortly before it expires and shares one exchange among
 * concurrent requests. Clock and fetch are injectable so tests run against a local endpoint.
 */
import { createHash } from 'node:crypto'
import { GatewayError } from '../../core/errors.ts'
import { ssrfSafeFetch } from '../ssrf-fetch.ts'
import type { SignerNetwork } from './index.ts'

export interface AccessToken {
  token: string
  expiresAtMs: number
}

export interface TokenClientOptions {
  /** Tests only; by default the token endpoint is fetched through the SSRF-checked connector. */
  fetch?: typeof globalThis.fetch
  nowMs?: () => number
  /** A token is replaced this long before it expires, so no request goes out with one about to lapse. */
  refreshMarginMs?: number
  /** Upper bound on one token exchange. */
  timeoutMs?: number
}

const defaultRefreshMarginMs = 5 * 60_000
const defaultTimeoutMs = 10_000
// Providers that omit `expires_in` issue one-hour tokens (Google, Entra).
const defaultLifetimeSeconds = 3600

function tokenError(what: string, detail: string): GatewayError {
  // A failed exchange is the provider's auth dependency failing: 503 with Retry-After, never a 401.
  return new GatewayError('upstream_unavailable', `Could not obtain an access token for ${what}: ${detail}`, { headers: { 'retry-after': '5' } })
}

/** POSTs a form to a token endpoint and reads `access_token` / `expires_in`. Error details never echo the form. */
export async function exchangeToken(
  url: string,
  form: Record<string, string>,
  what: string,
  options: TokenClient,
  network: SignerNetwork,
): Promise<AccessToken> {
  let response: Response
  // Token endpoints can be named by a provider's options (`authorityHost`, a service account's
  // `token_uri`): fetched through the SSRF-checked connector under the provider's own network
  // setting, so a provider that may not reach private networks cannot reach a private token
  // endpoint either, and none reaches cloud metadata or unspecified addresses.
  const fetchToken = options.fetch ?? ssrfSafeFetch(network.allowPrivateNetwork)
  try {
    response = await fetchToken(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  } catch (error) {
    throw tokenError(what, `the token endpoint could not be reached (${(error as Error).name})`)
  }
  let body: unknown
  try {
    body = await response.json()
  } catch {
    body = null
  }
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  if (!response.ok || typeof fields.access_token !== 'string') {
    // The OAuth `error` code (invalid_grant, invalid_client...) says what is wrong without revealing anything.
    const code = typeof fields.error === 'string' ? ` (${fields.error.slice(0, 64)})` : ''
    throw tokenError(what, `the token endpoint answered HTTP ${response.status}${code}`)
  }
  const lifetimeSeconds = Number(fields.expires_in ?? defaultLifetimeSeconds)
  const seconds = Number.isFinite(lifetimeSeconds) && lifetimeSeconds > 0 ? lifetimeSeconds : defaultLifetimeSeconds
  return { token: fields.access_token, expiresAtMs: options.nowMs() + seconds * 1000 }
}

type Entry = { kind: 'ready'; token: AccessToken } | { kind: 'pending'; promise: Promise<AccessToken> }

export class AccessTokenCache {
  readonly #entries = new Map<string, Entry>()
  readonly #nowMs: () => number
  readonly #refreshMarginMs: number

  constructor(nowMs: () => number, refreshMarginMs = defaultRefreshMarginMs) {
    this.#nowMs = nowMs
    this.#refreshMarginMs = refreshMarginMs
  }

  /** Cache keys are digests, so the map never holds credential material in the clear. */
  static key(...parts: string[]): string {
    return createHash('sha256').update(parts.join('\u0000')).digest('hex')
  }

  async get(key: string, exchange: () => Promise<AccessToken>): Promise<string> {
    const entry = this.#entries.get(key)
    if (entry?.kind === 'ready' && entry.token.expiresAtMs - this.#refreshMarginMs > this.#nowMs()) return entry.token.token
    if (entry?.kind === 'pending') return (await entry.promise).token
    const promise = exchange()
    this.#entries.set(key, { kind: 'pending', promise })
    try {
      const token = await promise
      this.#entries.set(key, { kind: 'ready', token })
      return token.token
    } catch (error) {
      // Failures are not cached: the next request tries again.
      this.#entries.delete(key)
      throw error
    }
  }
}

/** The client settings with defaults filled in; `fetch` stays unset unless a test injects one. */
export type TokenClient = Required<Omit<TokenClientOptions, 'fetch'>> & Pick<TokenClientOptions, 'fetch'>

export function tokenClientDefaults(options: TokenClientOptions): TokenClient {
  return {
    fetch: options.fetch,
    nowMs: options.nowMs ?? Date.now,
    refreshMarginMs: options.refreshMarginMs ?? defaultRefreshMarginMs,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
  }
}
