import { createHash, createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { secretBag } from '../../core/secret.ts'
import { createAwsSigV4Signer, signAwsRequest } from './aws-sigv4.ts'
import type { SignableRequest } from './index.ts'

// The AWS SigV4 test suite's credentials and signing time.
const suiteKey = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 'service' }
const suiteTime = new Date('2015-08-30T12:36:00Z')
const suiteScope = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date'

/** SigV4 written out from the specification with node:crypto, to check the smithy signer against. */
function referenceSignature(method: string, url: URL, headers: Record<string, string>, body: string, key: typeof suiteKey & { sessionToken?: string }, amzDate: string): string {
  const sha256 = (data: string) => createHash('sha256').update(data).digest('hex')
  const hmac = (secret: string | Buffer, data: string) => createHmac('sha256', secret).update(data).digest()
  const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  const canonicalPath = url.pathname.split('/').map((segment) => encode(segment)).join('/')
  const canonicalQuery = [...url.searchParams].map(([k, v]) => `${encode(k)}=${encode(v)}`).sort().join('&')
  const all: Record<string, string> = { ...headers, host: url.host, 'x-amz-date': amzDate, ...(key.sessionToken && { 'x-amz-security-token': key.sessionToken }) }
  const names = Object.keys(all).map((name) => name.toLowerCase()).sort()
  const canonicalHeaders = names.map((name) => `${name}:${all[name]!.trim()}\n`).join('')
  const canonicalRequest = [method, canonicalPath, canonicalQuery, canonicalHeaders, names.join(';'), sha256(body)].join('\n')
  const date = amzDate.slice(0, 8)
  const scope = `${date}/${key.region}/${key.service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n')
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${key.secretAccessKey}`, date), key.region), key.service), 'aws4_request')
  return createHmac('sha256', signingKey).update(stringToSign).digest('hex')
}

describe('signAwsRequest', () => {
  it('matches the AWS test suite: get-vanilla, post-vanilla, get-vanilla-query-order-key-case', async () => {
    expect(await signAwsRequest({ method: 'GET', url: 'https://example.amazonaws.com/', headers: {} }, suiteKey, suiteTime)).toEqual({
      'x-amz-date': '20150830T123600Z',
      authorization: `AWS4-HMAC-SHA256 ${suiteScope}, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`,
    })
    const post = await signAwsRequest({ method: 'POST', url: 'https://example.amazonaws.com/', headers: {} }, suiteKey, suiteTime)
    expect(post.authorization).toBe(`AWS4-HMAC-SHA256 ${suiteScope}, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`)
    const query = await signAwsRequest({ method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1', headers: {} }, suiteKey, suiteTime)
    expect(query.authorization).toBe(`AWS4-HMAC-SHA256 ${suiteScope}, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`)
  })

  it('signs a Bedrock call (encoded model id, JSON body, session token) as the specification says', async () => {
    const key = { ...suiteKey, region: 'eu-west-1', service: 'bedrock', sessionToken: 'FQoGZXIvYXdzEXAMPLETOKEN' }
    const url = new URL('https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse')
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] })
    const headers = { 'content-type': 'application/json', accept: 'application/json' }
    const signed = await signAwsRequest({ method: 'POST', url, headers, body: new TextEncoder().encode(body) }, key, suiteTime)
    expect(signed['x-amz-security-token']).toBe('FQoGZXIvYXdzEXAMPLETOKEN')
    expect(signed).not.toHaveProperty('host')
    expect(signed).not.toHaveProperty('content-type')
    const expected = referenceSignature('POST', url, headers, body, key, '20150830T123600Z')
    expect(signed.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/eu-west-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token, Signature=${expected}`,
    )
    // A string body signs the same as its UTF-8 bytes.
    expect(await signAwsRequest({ method: 'POST', url, headers, body }, key, suiteTime)).toEqual(signed)
  })
})

describe('aws-sigv4 transport signer', () => {
  const request = (): SignableRequest => ({
    method: 'POST',
    url: new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse'),
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode('{}'),
  })

  it('adds the signature headers from the stored credentials and the region option', async () => {
    const signable = request()
    await createAwsSigV4Signer('bedrock')(signable, secretBag({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }), { region: 'us-east-1' })
    expect(signable.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/)
    expect(signable.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/)
    expect(signable.headers['content-type']).toBe('application/json')
  })

  it('refuses to sign without credentials or a region, without echoing any secret', async () => {
    const signer = createAwsSigV4Signer('bedrock')
    await expect(signer(request(), secretBag({ accessKeyId: 'AKIDEXAMPLE' }), { region: 'us-east-1' })).rejects.toThrow(/'secretAccessKey' credential/)
    const error = await signer(request(), secretBag({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'top-secret' }), {}).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(GatewayError)
    expect(String((error as GatewayError).message)).not.toContain('top-secret')
  })
})
