/**
 * An OpenID Connect provider on loopback, for browserless sign-in tests: discovery
 * (/.well-known/openid-configuration), an authorization endpoint that "signs in" the configured
 * user at once and redirects back with a code, a token endpoint (client_secret_basic or _post,
 * PKCE S256 checked), a JWKS, and UserInfo. ID tokens are RS256, signed with jose.
 *
 * What a test can bend: `user` (the claims of whoever signs in next), `tamper` (a wrong issuer or
 * nonce in the next ID tokens), `now` (the provider's clock, to agree with the control plane's),
 * and it records every authorization request it saw.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'

export interface OidcUser {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
  given_name?: string
  family_name?: string
  groups?: string[]
  [claim: string]: unknown
}

export interface OidcSimulatorOptions {
  clientId: string
  clientSecret: string
  redirectUri: string
  /** The provider's clock (default: the process clock). */
  now?: () => Date
}

export interface OidcSimulator {
  readonly issuer: string
  /** Who signs in at the next authorization request. */
  user: OidcUser
  /** Leave out `email` etc. from the ID token so the client must read UserInfo. */
  userInfoOnly: Set<string>
  tamper: { issuer?: string; nonce?: string; audience?: string }
  readonly authorizeRequests: URLSearchParams[]
  readonly tokenRequests: URLSearchParams[]
  /** An access JWT from this issuer (for gateways verifying against `${issuer}/jwks`). */
  mintJwt(claims: Record<string, unknown> & { sub: string }, audience: string): Promise<string>
  close(): Promise<void>
}

interface PendingCode {
  user: OidcUser
  nonce: string | null
  codeChallenge: string
  redirectUri: string
  authTime: number
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  response.end(JSON.stringify(body))
}

export async function startOidcSimulator(options: OidcSimulatorOptions): Promise<OidcSimulator> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'sim-key-1', alg: 'RS256', use: 'sig' }
  const now = options.now ?? (() => new Date())
  const codes = new Map<string, PendingCode>()
  const accessTokens = new Map<string, OidcUser>()
  let issuer = ''

  const sim: OidcSimulator = {
    get issuer() {
      return issuer
    },
    user: { sub: 'user-1', email: 'user@example.com', email_verified: true, name: 'Example User' },
    userInfoOnly: new Set(),
    tamper: {},
    authorizeRequests: [],
    tokenRequests: [],
    mintJwt: async (claims, audience) => {
      const seconds = Math.floor(now().getTime() / 1000)
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid! }).setIssuer(issuer).setAudience(audience)
        .setSubject(claims.sub).setIssuedAt(seconds).setExpirationTime(seconds + 3600).sign(privateKey)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  async function idToken(code: PendingCode): Promise<string> {
    const seconds = Math.floor(now().getTime() / 1000)
    const claims: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(code.user)) if (!sim.userInfoOnly.has(name)) claims[name] = value
    if (code.nonce !== null || sim.tamper.nonce) claims.nonce = sim.tamper.nonce ?? code.nonce
    return new SignJWT({ ...claims, auth_time: code.authTime })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid! })
      .setIssuer(sim.tamper.issuer ?? issuer)
      .setAudience(sim.tamper.audience ?? options.clientId)
      .setSubject(code.user.sub)
      .setIssuedAt(seconds)
      .setExpirationTime(seconds + 300)
      .sign(privateKey)
  }

  function clientAuthenticated(request: IncomingMessage, form: URLSearchParams): boolean {
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part))
      return id === options.clientId && secret === options.clientSecret
    }
    return form.get('client_id') === options.clientId && form.get('client_secret') === options.clientSecret
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', issuer)
    if (request.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return json(response, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        userinfo_endpoint: `${issuer}/userinfo`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: ['openid', 'email', 'profile', 'groups'],
        authorization_response_iss_parameter_supported: true,
      })
    }
    if (request.method === 'GET' && url.pathname === '/jwks') return json(response, 200, { keys: [jwk] })
    if (request.method === 'GET' && url.pathname === '/authorize') {
      const query = url.searchParams
      sim.authorizeRequests.push(query)
      const redirectUri = query.get('redirect_uri')
      if (query.get('client_id') !== options.clientId || redirectUri !== options.redirectUri) return json(response, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' })
      const back = new URL(redirectUri)
      if (query.get('response_type') !== 'code' || query.get('code_challenge_method') !== 'S256' || !query.get('code_challenge')) {
        back.searchParams.set('error', 'invalid_request')
      } else {
        const code = randomBytes(16).toString('base64url')
        codes.set(code, { user: { ...sim.user }, nonce: query.get('nonce'), codeChallenge: query.get('code_challenge')!, redirectUri, authTime: Math.floor(now().getTime() / 1000) })
        back.searchParams.set('code', code)
      }
      if (query.get('state') !== null) back.searchParams.set('state', query.get('state')!)
      back.searchParams.set('iss', sim.tamper.issuer ?? issuer)
      response.writeHead(302, { location: back.href })
      return void response.end()
    }
    if (request.method === 'POST' && url.pathname === '/token') {
      const form = await readForm(request)
      sim.tokenRequests.push(form)
      if (!clientAuthenticated(request, form)) return json(response, 401, { error: 'invalid_client' })
      const code = codes.get(form.get('code') ?? '')
      codes.delete(form.get('code') ?? '')
      if (form.get('grant_type') !== 'authorization_code' || !code) return json(response, 400, { error: 'invalid_grant' })
      if (form.get('redirect_uri') !== code.redirectUri) return json(response, 400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' })
      const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url')
      if (challenge !== code.codeChallenge) return json(response, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' })
      const accessToken = randomBytes(16).toString('base64url')
      accessTokens.set(accessToken, code.user)
      return json(response, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: await idToken(code) })
    }
    if (request.method === 'GET' && url.pathname === '/userinfo') {
      const user = accessTokens.get((request.headers.authorization ?? '').replace(/^Bearer /, ''))
      if (!user) return json(response, 401, { error: 'invalid_token' })
      return json(response, 200, user)
    }
    json(response, 404, { error: 'not_found' })
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => json(response, 500, { error: 'server_error', error_description: String(error) }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return sim
}
