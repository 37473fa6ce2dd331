/**
 * A JWKS cache that survives identity-provider outages. jose's remote set evicts after its max age
 * and then fails every verification while the IdP is down; this one:
 *  - refreshes in the background every `refreshMs` (default 5 min), one fetch at a time;
 *  - keeps the last good key set for `staleIfErrorMs` (default 24 h) after a refresh started failing;
 *  - refetches on an unknown `kid` at most once per `cooldownMs` (default 30 s), so a flood of
 *    tokens with random kids cannot hammer the IdP;
 *  - fetches with a timeout, refuses redirects and bodies over 1 MiB;
 *  - fetches through the SSRF-safe dispatcher: the identity provider may run in the cluster (private
 *    addresses allowed: the URL is boot configuration, not tenant input), cloud metadata never.
 *
 * Shared by the admin API (operator) and the gateway's data-plane JWT check, hence its place in the
 * snapshot subpath, the one gateway module the operator imports.
 */
import type { createLocalJWKSet, JSONWebKeySet, JWTVerifyGetKey } from 'jose'
import { fetch } from '../core/undici.ts'
import type { Dispatcher } from 'undici'
import { ssrfSafeDispatcher } from '../upstream/ssrf.ts'

export type Clock = () => Date
const systemClock: Clock = () => new Date()

const MAX_JWKS_BYTES = 1024 * 1024

export interface JwksCacheOptions {
  url: string
  clock?: Clock
  refreshMs?: number
  staleIfErrorMs?: number
  cooldownMs?: number
  fetchTimeoutMs?: number
  /** Where the fetch goes through; the shared SSRF-safe dispatcher (private networks allowed) by default. */
  dispatcher?: Dispatcher
}

export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError'
}

/** Reads a body as text, giving up (and cancelling) once it passes `limitBytes`. */
async function boundedText(body: ReadableStream<Uint8Array> | null, limitBytes: number): Promise<string> {
  if (body === null) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > limitBytes) {
      await body.cancel().catch(() => undefined)
      throw new JwksUnavailableError('JWKS document is too large')
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export class JwksCache {
  readonly #url: string
  readonly #clock: Clock
  readonly #refreshMs: number
  readonly #staleIfErrorMs: number
  readonly #cooldownMs: number
  readonly #fetchTimeoutMs: number
  readonly #dispatcher: Dispatcher
  #keySet: ReturnType<typeof createLocalJWKSet> | null = null
  #fetchedAtMs = 0
  #lastAttemptMs = -Infinity
  #inflight: Promise<void> | null = null
  #timer: NodeJS.Timeout | null = null

  constructor(options: JwksCacheOptions) {
    this.#url = options.url
    this.#clock = options.clock ?? systemClock
    this.#refreshMs = options.refreshMs ?? 5 * 60_000
    this.#staleIfErrorMs = options.staleIfErrorMs ?? 24 * 3_600_000
    this.#cooldownMs = options.cooldownMs ?? 30_000
    this.#fetchTimeoutMs = options.fetchTimeoutMs ?? 5_000
    this.#dispatcher = options.dispatcher ?? ssrfSafeDispatcher(true)
  }

  /** Starts background refresh; returns the stop function. */
  start(): () => void {
    this.#timer = setInterval(() => void this.refresh().catch(() => {}), this.#refreshMs)
    this.#timer.unref()
    return () => {
      if (this.#timer) clearInterval(this.#timer)
      this.#timer = null
    }
  }

  /** Single-flight fetch of the key set. */
  refresh(): Promise<void> {
    this.#inflight ??= this.#fetch().finally(() => {
      this.#inflight = null
    })
    return this.#inflight
  }

  async #fetch(): Promise<void> {
    this.#lastAttemptMs = this.#clock().getTime()
    const response = await fetch(this.#url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(this.#fetchTimeoutMs),
      headers: { accept: 'application/json' },
      dispatcher: this.#dispatcher,
    })
    if (response.status !== 200) throw new JwksUnavailableError(`JWKS endpoint answered ${response.status}`)
    const text = await boundedText(response.body, MAX_JWKS_BYTES)
    const jwks = JSON.parse(text) as JSONWebKeySet
    if (!Array.isArray(jwks.keys)) throw new JwksUnavailableError('JWKS document has no keys array')
    // Keys without a pinned asymmetric algorithm would let the token header choose; drop them.
    const usable = jwks.keys.filter((key) => key.kty === 'RSA' || key.kty === 'EC' || key.kty === 'OKP')
    // Loaded with the first key set: gateways without JWT sign-in (and sidecars) never load jose.
    const { createLocalJWKSet } = await import('jose')
    this.#keySet = createLocalJWKSet({ keys: usable })
    this.#fetchedAtMs = this.#clock().getTime()
  }

  async #current(): Promise<ReturnType<typeof createLocalJWKSet>> {
    const now = this.#clock().getTime()
    if (this.#keySet === null) {
      await this.refresh().catch((error: unknown) => {
        throw new JwksUnavailableError(`JWKS unavailable: ${(error as Error).message}`)
      })
    } else if (now - this.#fetchedAtMs > this.#refreshMs) {
      // Due for refresh: try, but keep serving the last good set inside the stale-if-error window.
      await this.refresh().catch(() => {
        if (now - this.#fetchedAtMs > this.#refreshMs + this.#staleIfErrorMs) {
          throw new JwksUnavailableError('JWKS unavailable and the cached key set is past its stale-if-error window')
        }
      })
    }
    return this.#keySet!
  }

  /** The key resolver for jose's jwtVerify. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const keySet = await this.#current()
    try {
      return await keySet(header, token)
    } catch (error) {
      const noMatch = (error as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY'
      if (!noMatch || this.#clock().getTime() - this.#lastAttemptMs < this.#cooldownMs) throw error
      await this.refresh().catch(() => {})
      return this.#keySet!(header, token)
    }
  }
}
