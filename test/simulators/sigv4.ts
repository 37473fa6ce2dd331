/**
 * AWS Signature Version 4 verification for the Bedrock simulator, written from the published
 * algorithm with node:crypto rather than with the smithy signer the gateway uses, so a mistake in
 * how the gateway drives its signer (path encoding of model ids with `:`, unsigned headers, a body
 * changed after signing) fails here as it would at AWS.
 */
import { createHash, createHmac } from 'node:crypto'
import type { RecordedRequest } from './base.ts'

export interface ParsedAuthorization {
  accessKeyId: string
  date: string
  region: string
  service: string
  signedHeaders: string[]
  signature: string
}

const authorizationPattern =
  /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/

export function parseAuthorization(header: string | undefined): ParsedAuthorization | null {
  const match = header ? authorizationPattern.exec(header) : null
  if (!match) return null
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match
  return { accessKeyId: accessKeyId!, date: date!, region: region!, service: service!, signedHeaders: signedHeaders!.split(';'), signature: signature! }
}

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters. */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** Services other than S3 encode each segment of the path as sent once more (`%3A` -> `%253A`). */
function canonicalUri(path: string): string {
  return path.split('/').map(uriEncode).join('/') || '/'
}

function canonicalQuery(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&')
}

function headerValue(request: RecordedRequest, name: string): string {
  const value = request.headers[name]
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '')
  return joined.trim().replace(/\s+/g, ' ')
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest()

/** The signature AWS would compute for `request` with `secretAccessKey`. */
export function expectedSignature(request: RecordedRequest, auth: ParsedAuthorization, secretAccessKey: string): string {
  const amzDate = headerValue(request, 'x-amz-date')
  // The hash of the bytes that arrived, whatever an `x-amz-content-sha256` header claims.
  const payloadHash = sha256Hex(request.rawBody)
  const canonicalHeaders = [...auth.signedHeaders].sort().map((name) => `${name}:${headerValue(request, name)}\n`).join('')
  const canonicalRequest = [
    request.method,
    canonicalUri(request.path),
    canonicalQuery(request.query),
    canonicalHeaders,
    auth.signedHeaders.join(';'),
    payloadHash,
  ].join('\n')
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n')
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, auth.date), auth.region), auth.service), 'aws4_request')
  return createHmac('sha256', signingKey).update(stringToSign).digest('hex')
}

/** `x-amz-date` (`YYYYMMDDTHHMMSSZ`) as milliseconds since the epoch, or NaN. */
export function amzDateMs(value: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  if (!match) return Number.NaN
  const [, year, month, day, hour, minute, second] = match.map(Number)
  return Date.UTC(year!, month! - 1, day!, hour!, minute!, second!)
}
