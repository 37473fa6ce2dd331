/**
 * Google Cloud authentication (Vertex AI), by credential:
 * - `accessToken`: a ready OAuth access token, sent as a bearer token.
 * - `serviceAccountJson`: a service-account key file. Its private key signs an RS256 JWT
 *   assertion, which the key's `token_uri` exchanges for an access token (the JWT bearer grant,
 *   RFC 7523); the token is cached until shortly before it expires. The scope is cloud-platform
 *   unless the provider option `oauthScope` names another.
 */
import { GatewayError } from '../../core/errors.ts'
import { AccessTokenCache, exchangeToken, tokenClientDefaults, type TokenClientOptions } from './access-token.ts'
import { PUBLIC_NETWORK_ONLY, registerSigner, type Signer } from './index.ts'

export const cloudPlatformScope = 'https://www.googleapis.com/auth/cloud-platform'
const defaultTokenUri = 'https://oauth2.googleapis.com/token'
const jwtBearerGrant = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
// Google accepts assertions valid for at most one hour.
const assertionLifetimeSeconds = 3600

interface ServiceAccountKey {
  client_email: string
  private_key: string
  private_key_id?: string
  token_uri?: string
}

function badCredential(detail: string): GatewayError {
  // The credential is the operator's to fix; never echo any of it.
  return new GatewayError('upstream_unavailable', `The Google service account credential is unusable: ${detail}`, { headers: { 'retry-after': '30' } })
}

export function parseServiceAccountKey(json: string): ServiceAccountKey {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    throw badCredential('it is not JSON')
  }
  const key = parsed as Partial<ServiceAccountKey> | null
  if (typeof key?.client_email !== 'string' || typeof key.private_key !== 'string') throw badCredential('client_email or private_key is missing')
  return key as ServiceAccountKey
}

async function signAssertion(key: ServiceAccountKey, tokenUri: string, scope: string, nowMs: number): Promise<string> {
  // Loaded with the first Google credential: other gateways (and most sidecars) never load jose.
  const { importPKCS8, SignJWT } = await import('jose')
  let privateKey: Awaited<ReturnType<typeof importPKCS8>>
  try {
    privateKey = await importPKCS8(key.private_key, 'RS256')
  } catch {
    throw badCredential('private_key is not a PKCS#8 RSA key')
  }
  const issuedAt = Math.floor(nowMs / 1000)
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id && { kid: key.private_key_id }) })
    .setIssuer(key.client_email)
    .setAudience(tokenUri)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + assertionLifetimeSeconds)
    .sign(privateKey)
}

export function createGoogleOAuthSigner(clientOptions: TokenClientOptions = {}): Signer {
  const client = tokenClientDefaults(clientOptions)
  const cache = new AccessTokenCache(client.nowMs, client.refreshMarginMs)
  return async (request, credentials, options, network) => {
    if (credentials.accessToken) {
      request.headers.authorization = `Bearer ${credentials.accessToken.reveal()}`
      return
    }
    if (!credentials.serviceAccountJson) {
      throw new GatewayError('upstream_unavailable', "Google Cloud needs a 'serviceAccountJson' or an 'accessToken' credential", { headers: { 'retry-after': '30' } })
    }
    const json = credentials.serviceAccountJson.reveal()
    const scope = options.oauthScope || cloudPlatformScope
    const token = await cache.get(AccessTokenCache.key(json, scope), async () => {
      const key = parseServiceAccountKey(json)
      const tokenUri = key.token_uri ?? defaultTokenUri
      const assertion = await signAssertion(key, tokenUri, scope, client.nowMs())
      return exchangeToken(tokenUri, { grant_type: jwtBearerGrant, assertion }, 'Google Cloud', client, network ?? PUBLIC_NETWORK_ONLY)
    })
    request.headers.authorization = `Bearer ${token}`
  }
}

registerSigner('google-oauth', createGoogleOAuthSigner())
