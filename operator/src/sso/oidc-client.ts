/**
 * The OpenID Connect relying party, on `openid-client` v6 (authorization code with PKCE and
 * nonce): discovery once (retried on the next sign-in after a failure), an authorization URL per
 * sign-in, and the code exchange with the library's checks (state, nonce, issuer, audience,
 * signature against the IdP's JWKS, PKCE verifier).
 *
 * Time: the library checks `iat`/`exp` against the process clock; the control plane's injectable
 * clock is handed over as `clockSkew` per exchange, so a test clock and the checks agree.
 */
import * as client from 'openid-client'
import type { Clock } from '../clock.ts'
import { isLoopbackIssuer, type SsoSettings } from './config.ts'

export interface AuthorizationStart {
  url: URL
  state: string
  nonce: string
  codeVerifier: string
}

/** What the IdP said about the user, from the verified ID token (and UserInfo when it has more). */
export type IdTokenClaims = Record<string, unknown> & { sub: string }

export class OidcRelyingParty {
  readonly #settings: SsoSettings
  readonly #clock: Clock
  #server: Promise<client.ServerMetadata> | null = null
  #jwksCache: client.ExportedJWKSCache | undefined

  constructor(settings: SsoSettings, clock: Clock) {
    this.#settings = settings
    this.#clock = clock
  }

  get settings(): SsoSettings {
    return this.#settings
  }

  /** Discovery, cached; a failure is not cached (the next sign-in tries again). */
  #serverMetadata(): Promise<client.ServerMetadata> {
    this.#server ??= client.discovery(this.#settings.issuer, this.#settings.clientId, undefined, undefined, {
      ...(isLoopbackIssuer(this.#settings.issuer) ? { execute: [client.allowInsecureRequests] } : {}),
      timeout: 10,
    }).then((config) => config.serverMetadata()).catch((error: unknown) => {
      this.#server = null
      throw error
    })
    return this.#server
  }

  /** A configuration for one exchange, with the control plane's clock as the library's. */
  async #configuration(): Promise<client.Configuration> {
    const skewSeconds = Math.round((this.#clock().getTime() - Date.now()) / 1000)
    const metadata: Partial<client.ClientMetadata> = { [client.clockSkew]: skewSeconds }
    const auth = this.#settings.clientSecret === null ? client.None() : client.ClientSecretBasic(this.#settings.clientSecret)
    if (this.#settings.clientSecret !== null) metadata.client_secret = this.#settings.clientSecret
    const config = new client.Configuration(await this.#serverMetadata(), this.#settings.clientId, metadata, auth)
    if (isLoopbackIssuer(this.#settings.issuer)) client.allowInsecureRequests(config)
    if (this.#jwksCache) client.setJwksCache(config, this.#jwksCache)
    return config
  }

  async start(): Promise<AuthorizationStart> {
    const config = await this.#configuration()
    const codeVerifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const nonce = client.randomNonce()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#settings.redirectUri.href,
      scope: this.#settings.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    return { url, state, nonce, codeVerifier }
  }

  /**
   * Exchanges the callback's code. `query` is the callback's query string; the URL handed to the
   * library is rebuilt on the registered redirect URI, so a proxy in front does not change the
   * `redirect_uri` the token endpoint compares.
   */
  async finish(query: string, expected: { state: string; nonce: string; codeVerifier: string }): Promise<IdTokenClaims> {
    const config = await this.#configuration()
    const currentUrl = new URL(this.#settings.redirectUri.href)
    currentUrl.search = query
    const tokens = await client.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: expected.codeVerifier,
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      idTokenExpected: true,
    })
    this.#jwksCache = client.getJwksCache(config) ?? this.#jwksCache
    const claims = tokens.claims()
    if (!claims) throw new Error('the identity provider returned no ID token')
    let merged: IdTokenClaims = { ...claims }
    const { email, groups } = this.#settings.claims
    // Groups (and sometimes email) are often only in UserInfo (Keycloak without a mapper).
    const missing = merged[email] === undefined || (groups !== null && merged[groups] === undefined)
    if (missing && tokens.access_token && config.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
      merged = { ...info, ...merged }
    }
    return merged
  }
}
