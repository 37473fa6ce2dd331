/**
 * Azure OpenAI authentication, by credential:
 * - `apiKey`: sent as the `api-key` header.
 * - `accessToken`: a ready Microsoft Entra ID token, sent as a bearer token.
 * - `clientSecret` with `tenantId` and `clientId` (credentials or options): an Entra ID token from
 *   the client credentials grant, cached until shortly before it expires. The scope defaults to
 *   Cognitive Services (option `entraScope` overrides it); option `authorityHost` points at a
 *   sovereign cloud's login host.
 */
import { GatewayError } from '../../core/errors.ts'
import type { SecretBag } from '../../core/secret.ts'
import { AccessTokenCache, exchangeToken, tokenClientDefaults, type TokenClientOptions } from './access-token.ts'
import { PUBLIC_NETWORK_ONLY, registerSigner, type Signer } from './index.ts'

export const defaultEntraScope = 'https://cognitiveservices.azure.com/.default'
const defaultAuthorityHost = 'https://login.microsoftonline.com'

function setting(name: string, credentials: SecretBag, options: Readonly<Record<string, string>>): string | undefined {
  return credentials[name]?.reveal() ?? options[name]
}

export function createAzureSigner(clientOptions: TokenClientOptions = {}): Signer {
  const client = tokenClientDefaults(clientOptions)
  const cache = new AccessTokenCache(client.nowMs, client.refreshMarginMs)
  return async (request, credentials, options, network) => {
    if (credentials.apiKey) {
      request.headers['api-key'] = credentials.apiKey.reveal()
      return
    }
    if (credentials.accessToken) {
      request.headers.authorization = `Bearer ${credentials.accessToken.reveal()}`
      return
    }
    const tenantId = setting('tenantId', credentials, options)
    const clientId = setting('clientId', credentials, options)
    const clientSecret = credentials.clientSecret?.reveal()
    if (!tenantId || !clientId || !clientSecret) {
      throw new GatewayError('upstream_unavailable', "Azure OpenAI needs an 'apiKey', an 'accessToken', or 'tenantId', 'clientId' and 'clientSecret'", {
        headers: { 'retry-after': '30' },
      })
    }
    const scope = options.entraScope || defaultEntraScope
    const authority = (options.authorityHost || defaultAuthorityHost).replace(/\/+$/, '')
    const url = `${authority}/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`
    const token = await cache.get(AccessTokenCache.key(url, clientId, clientSecret, scope), () =>
      exchangeToken(url, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope }, 'Azure OpenAI', client, network ?? PUBLIC_NETWORK_ONLY),
    )
    request.headers.authorization = `Bearer ${token}`
  }
}

registerSigner('azure', createAzureSigner())
