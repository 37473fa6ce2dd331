/**
 * The credentials Gatehouse presents to an upstream MCP server: static headers, or an OAuth 2.0
 * client-credentials token fetched from the integration's token endpoint (through the SSRF-checked
 * fetch, with the server's network setting) and cached until shortly before it expires, one
 * exchange shared by concurrent requests. Used by the data plane's relay and the control plane's
 * sync alike. A failed token exchange is a 503 with Retry-After (the upstream's auth dependency
 * failing), never a 401 to the client.
 */
import type { FetchFunction } from '../upstream/ssrf-fetch.ts'
import { AccessTokenCache, exchangeToken, tokenClientDefaults } from '../upstream/signers/access-token.ts'
import type { SnapshotMcpAuth } from '../snapshot/mcp.ts'

export interface McpUpstreamAuthOptions {
  nowMs?: () => number
  /** Replaces the SSRF-checked fetch (tests of the token exchange only). */
  fetch?: FetchFunction
}

export class McpUpstreamAuth {
  readonly #cache: AccessTokenCache
  readonly #options: McpUpstreamAuthOptions

  constructor(options: McpUpstreamAuthOptions = {}) {
    this.#options = options
    this.#cache = new AccessTokenCache(options.nowMs ?? Date.now)
  }

  /** The headers to set on every upstream request (names as given; values are secrets). */
  async headers(auth: SnapshotMcpAuth, allowPrivateNetwork: boolean): Promise<Record<string, string>> {
    switch (auth.type) {
      case 'none':
        return {}
      case 'headers':
        return { ...auth.headers }
      case 'oauth_client_credentials': {
        const key = AccessTokenCache.key(auth.tokenUrl, auth.clientId, auth.clientSecret, auth.scope ?? '', auth.audience ?? '')
        const defaults = tokenClientDefaults({ fetch: this.#options.fetch, ...(this.#options.nowMs ? { nowMs: this.#options.nowMs } : {}) })
        const form: Record<string, string> = { grant_type: 'client_credentials', client_id: auth.clientId, client_secret: auth.clientSecret }
        if (auth.scope) form.scope = auth.scope
        if (auth.audience) form.audience = auth.audience
        const token = await this.#cache.get(key, () => exchangeToken(auth.tokenUrl, form, 'the MCP server', defaults, { allowPrivateNetwork }))
        return { authorization: `Bearer ${token}` }
      }
    }
  }
}
