/**
 * AWS Signature Version 4 for providers on AWS (Bedrock). `signAwsRequest` computes the headers to
 * add (`authorization`, `x-amz-date`, and `x-amz-security-token` with temporary credentials) with
 * the smithy signer that AWS's own SDK uses; the signer registered here reads the credentials
 * (`accessKeyId`, `secretAccessKey`, optional `sessionToken`) and the `region` option.
 *
 * The path is signed as the transport sends it (already percent-encoded, e.g. a Bedrock model id
 * with `%3A`); SigV4 for services other than S3 encodes it once more, as the AWS SDKs do.
 */
import type * as AwsSha256 from '@aws-crypto/sha256-js'
import type * as SmithySignatureV4 from '@smithy/signature-v4'
import { GatewayError } from '../../core/errors.ts'
import type { SecretBag } from '../../core/secret.ts'
import { registerSigner, type Signer } from './index.ts'

export interface AwsRequestToSign {
  method: string
  url: URL | string
  headers: Readonly<Record<string, string>>
  body?: Uint8Array | string
}

export interface AwsSigningKey {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  region: string
  service: string
}

/**
 * The smithy signer and its hash, loaded on the first signature: only AWS providers use them, and
 * every gateway (a sidecar above all) would otherwise pay their start-up time and memory.
 */
let awsSigning: Promise<[typeof SmithySignatureV4, typeof AwsSha256]> | null = null
function loadAwsSigning() {
  awsSigning ??= Promise.all([import('@smithy/signature-v4'), import('@aws-crypto/sha256-js')])
  return awsSigning
}

/** The headers to add to `request` so that AWS accepts it. `now` fixes the signing time (tests). */
export async function signAwsRequest(request: AwsRequestToSign, key: AwsSigningKey, now: Date = new Date()): Promise<Record<string, string>> {
  const url = typeof request.url === 'string' ? new URL(request.url) : request.url
  const [{ SignatureV4 }, { Sha256 }] = await loadAwsSigning()
  const signer = new SignatureV4({
    service: key.service,
    region: key.region,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey, ...(key.sessionToken && { sessionToken: key.sessionToken }) },
    sha256: Sha256,
    // The payload hash goes into the signature either way; only S3 also wants it as a header.
    applyChecksum: false,
  })
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value
  // The host is always signed; the transport sends the same value (origin host and port).
  headers.host = url.host
  const query: Record<string, string | string[]> = {}
  for (const [name, value] of url.searchParams) {
    const existing = query[name]
    query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value]
  }
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port && { port: Number(url.port) }),
      path: url.pathname,
      query,
      headers,
      body: request.body,
    },
    { signingDate: now },
  )
  const added: Record<string, string> = {}
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name !== 'host' && headers[name] !== value) added[name] = value
  }
  return added
}

function credential(credentials: SecretBag, name: string): string {
  const value = credentials[name]?.reveal()
  if (!value) {
    throw new GatewayError('upstream_unavailable', `The provider has no '${name}' credential configured`, { headers: { 'retry-after': '30' } })
  }
  return value
}

/** A transport signer for one AWS service. */
export function createAwsSigV4Signer(service: string): Signer {
  return async (request, credentials, options) => {
    const region = options.region
    if (!region) throw new GatewayError('invalid_config', "An AWS provider needs the 'region' option", { param: 'options.region' })
    const sessionToken = credentials.sessionToken?.reveal()
    const headers = await signAwsRequest(
      { method: request.method, url: request.url, headers: request.headers, ...(request.body && { body: request.body }) },
      {
        accessKeyId: credential(credentials, 'accessKeyId'),
        secretAccessKey: credential(credentials, 'secretAccessKey'),
        ...(sessionToken && { sessionToken }),
        region,
        service,
      },
    )
    Object.assign(request.headers, headers)
  }
}

// Bedrock is the one AWS service behind the `aws-sigv4` scheme today (its `service` is 'bedrock').
registerSigner('aws-sigv4', createAwsSigV4Signer('bedrock'))
