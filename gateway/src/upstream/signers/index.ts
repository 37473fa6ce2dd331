/**
 * Applies a provider credential to an outgoing request according to the adapter's auth scheme.
 * Adapters never see credentials; this is the only place that reads them.
 */
import type { AuthScheme } from '../../providers/adapter.ts'
import { GatewayError } from '../../core/errors.ts'
import type { SecretBag } from '../../core/secret.ts'

export interface SignableRequest {
  method: string
  url: URL
  headers: Record<string, string>
  body: Uint8Array | undefined
}

/** Where the provider may connect (its snapshot `network`); token endpoints are held to it too. */
export interface SignerNetwork {
  readonly allowPrivateNetwork: boolean
}

/** What a signer assumes when not told: public networks only, the safe side. */
export const PUBLIC_NETWORK_ONLY: SignerNetwork = { allowPrivateNetwork: false }

/** A signer for schemes that need more than a static header (SigV4, OAuth token exchange). */
export type Signer = (request: SignableRequest, credentials: SecretBag, options: Readonly<Record<string, string>>, network?: SignerNetwork) => Promise<void>

const advancedSigners = new Map<AuthScheme['type'], Signer>()

/** Signer modules register themselves here so that the transport stays free of their dependencies. */
export function registerSigner(type: AuthScheme['type'], signer: Signer): void {
  advancedSigners.set(type, signer)
}

function requireCredential(credentials: SecretBag, name: string): string {
  const value = credentials[name]
  if (!value) {
    throw new GatewayError('upstream_unavailable', `The provider has no '${name}' credential configured`, {
      headers: { 'retry-after': '30' },
    })
  }
  return value.reveal()
}

/**
 * Signs `request`. Static schemes (none, bearer, header, query) finish at once and return nothing,
 * so the request path waits on no promise for them; a signer's scheme returns its promise.
 */
export function applyAuth(
  scheme: AuthScheme,
  request: SignableRequest,
  credentials: SecretBag,
  options: Readonly<Record<string, string>>,
  network: SignerNetwork,
): Promise<void> | undefined {
  switch (scheme.type) {
    case 'none':
      return
    case 'bearer':
      // Local servers (vLLM, Ollama) often run without a key: send none rather than refuse.
      if (credentials.apiKey) request.headers.authorization = `Bearer ${credentials.apiKey.reveal()}`
      return
    case 'header':
      request.headers[scheme.name] = requireCredential(credentials, 'apiKey')
      return
    case 'query':
      request.url.searchParams.set(scheme.name, requireCredential(credentials, 'apiKey'))
      return
    default: {
      const signer = advancedSigners.get(scheme.type)
      if (!signer) throw new GatewayError('internal_error', `No signer is available for auth scheme '${scheme.type}'`)
      return signer(request, credentials, options, network)
    }
  }
}
