import { Sha256 } from '@aws-crypto/sha256-js'
import { SignatureV4 } from '@smithy/signature-v4'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { UpstreamEvent } from '../../gateway/src/providers/adapter.ts'
import { decodeAwsEventStream } from '../../gateway/src/upstream/framing/aws-eventstream.ts'
import { signAwsRequest } from '../../gateway/src/upstream/signers/aws-sigv4.ts'
import type { Simulator } from './base.ts'
import { startBedrockSimulator } from './bedrock.ts'

let sim: Simulator

beforeAll(async () => {
  sim = await startBedrockSimulator({ chunks: 3, apiKeys: ['AKIDSIMULATOR', 'bedrock-api-key'] })
})

afterEach(() => {
  sim.reset()
})

afterAll(async () => {
  await sim.close()
})

interface SigningOptions {
  service?: string
  accessKeyId?: string
  secretAccessKey?: string
  target?: Simulator
  signingDate?: Date
  /** Sent instead of the signed body. */
  tamperedBody?: string
}

async function signedPost(path: string, body: unknown, options: SigningOptions = {}): Promise<Response> {
  const url = new URL((options.target ?? sim).url + path)
  const signer = new SignatureV4({
    service: options.service ?? 'bedrock',
    region: 'us-east-1',
    credentials: { accessKeyId: options.accessKeyId ?? 'AKIDSIMULATOR', secretAccessKey: options.secretAccessKey ?? 'simulator-secret' },
    sha256: Sha256,
  })
  const payload = JSON.stringify(body)
  const request = {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'content-type': 'application/json', accept: 'application/json' },
    body: payload,
  }
  const signed = await signer.sign(request, options.signingDate ? { signingDate: options.signingDate } : {})
  const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== 'host'))
  return fetch(url, { method: 'POST', headers, body: options.tamperedBody ?? payload })
}

async function events(response: Response): Promise<UpstreamEvent[]> {
  expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
  const collected: UpstreamEvent[] = []
  for await (const event of decodeAwsEventStream(response.body!)) collected.push(event)
  return collected
}

const converseBody = { messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }], inferenceConfig: { maxTokens: 100 } }

describe('Bedrock simulator', () => {
  it('answers Converse with usage and records the SigV4 authorization', async () => {
    const response = await signedPost('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse', converseBody)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      output: { message: { role: 'assistant', content: [{ text: 'Echo: hello bedrock alpha bravo' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
      metrics: { latencyMs: 1 },
    })
    const recorded = sim.requests[0]!
    expect(recorded.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse')
    expect(recorded.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSIMULATOR\/\d{8}\/us-east-1\/bedrock\/aws4_request/)
    expect(recorded.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/)
  })

  it('streams Converse as event-stream frames the gateway decoder reads', async () => {
    const decoded = await events(await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream', converseBody))
    expect(decoded.map((event) => event.event)).toEqual([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ])
    const text = decoded
      .filter((event) => event.event === 'contentBlockDelta')
      .map((event) => (event.data as { delta: { text: string } }).delta.text)
      .join('')
    expect(text).toBe('Echo: hello bedrock alpha bravo')
    expect(decoded[5]?.data).toMatchObject({ stopReason: 'end_turn' })
    expect(decoded[6]?.data).toMatchObject({ usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 }, metrics: { latencyMs: 1 } })
  })

  it('streams a tool call with contentBlockStart and string input deltas', async () => {
    const decoded = await events(
      await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream', {
        messages: [{ role: 'user', content: [{ text: 'weather in Lisbon?' }] }],
        toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }] },
      }),
    )
    const start = decoded.find((event) => event.event === 'contentBlockStart')
    expect(start?.data).toMatchObject({ contentBlockIndex: 0, start: { toolUse: { name: 'get_weather' } } })
    const input = decoded
      .filter((event) => event.event === 'contentBlockDelta')
      .map((event) => (event.data as { delta: { toolUse: { input: string } } }).delta.toolUse.input)
      .join('')
    expect(JSON.parse(input)).toEqual({ city: 'Lisbon' })
    expect(decoded.find((event) => event.event === 'messageStop')?.data).toMatchObject({ stopReason: 'tool_use' })
  })

  it('invokes an Anthropic model, JSON and streamed in base64 chunk events', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hi claude' }] }
    const response = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke', body)
    expect(response.headers.get('x-amzn-bedrock-output-token-count')).toBe('3')
    expect(await response.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Echo: hi claude alpha bravo' }], stop_reason: 'end_turn' })

    const decoded = await events(await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke-with-response-stream', body))
    expect(decoded.every((event) => event.event === 'chunk')).toBe(true)
    const inner = decoded.map((event) => JSON.parse(Buffer.from((event.data as { bytes: string }).bytes, 'base64').toString('utf8')) as { type: string })
    expect(inner[0]?.type).toBe('message_start')
    expect(inner.at(-1)).toMatchObject({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { outputTokenCount: 3 } })
  })

  it('embeds with Titan', async () => {
    const response = await signedPost('/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'embed me', dimensions: 256 })
    const body = (await response.json()) as { embedding: number[]; inputTextTokenCount: number }
    expect(body.embedding).toHaveLength(256)
    expect(body.inputTextTokenCount).toBe(2)
  })

  it('refuses unsigned, wrongly scoped and unknown credentials; accepts a Bedrock API key', async () => {
    const unsigned = await fetch(`${sim.url}/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse`, { method: 'POST', body: JSON.stringify(converseBody) })
    expect(unsigned.status).toBe(403)
    expect(unsigned.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException/)
    expect(await unsigned.json()).toEqual({ message: 'Missing Authentication Token' })
    const wrongService = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', converseBody, { service: 's3' })
    expect(wrongService.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException/)
    const unknownKey = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', converseBody, { accessKeyId: 'AKIDOTHER' })
    expect(unknownKey.headers.get('x-amzn-errortype')).toMatch(/^UnrecognizedClientException/)
    const apiKey = await fetch(`${sim.url}/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse`, { method: 'POST', headers: { authorization: 'Bearer bedrock-api-key', 'content-type': 'application/json' }, body: JSON.stringify(converseBody) })
    expect(apiKey.status).toBe(200)
  })

  it('validates like Bedrock', async () => {
    const response = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', { messages: [{ role: 'assistant', content: [{ text: 'x' }] }] })
    expect(response.status).toBe(400)
    expect(response.headers.get('x-amzn-errortype')).toMatch(/^ValidationException:/)
    const system = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', { messages: [{ role: 'system', content: [{ text: 'x' }] }] })
    expect(((await system.json()) as { message: string }).message).toContain("'messages.1.member.role'")
  })

  it('lets a configured guardrail intervene on an unsafe prompt', async () => {
    const body = {
      messages: [{ role: 'user', content: [{ text: 'something unsafe' }] }],
      guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1', trace: 'enabled' },
    }
    const answer = (await (await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', body)).json()) as { stopReason: string; output: { message: { content: unknown[] } }; trace?: unknown }
    expect(answer.stopReason).toBe('guardrail_intervened')
    expect(answer.output.message.content).toEqual([{ text: 'Sorry, the model cannot answer this question.' }])
    expect(answer.trace).toBeDefined()
    const decoded = await events(await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream', body))
    expect(decoded.find((event) => event.event === 'messageStop')?.data).toMatchObject({ stopReason: 'guardrail_intervened' })
    const unguarded = (await (await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', { messages: body.messages })).json()) as { stopReason: string }
    expect(unguarded.stopReason).toBe('end_turn')
  })

  it('plays a scripted throttle and an in-stream exception', async () => {
    sim.script({ status: 429 }, { errorAfterChunks: 2, status: 429 })
    const throttled = await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', converseBody)
    expect(throttled.status).toBe(429)
    expect(throttled.headers.get('x-amzn-errortype')).toMatch(/^ThrottlingException/)
    expect(await throttled.json()).toEqual({ message: 'Too many requests, please wait before trying again.' })

    const decoded = await events(await signedPost('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream', converseBody))
    expect(decoded.map((event) => event.event)).toEqual(['messageStart', 'contentBlockDelta', 'exception:throttlingException'])
  })

  describe('with secrets, signatures are verified', () => {
    let verifying: Simulator
    const modelPath = '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse'

    beforeAll(async () => {
      verifying = await startBedrockSimulator({ chunks: 3, awsSecrets: { AKIDSIMULATOR: 'simulator-secret' } })
    })

    afterAll(async () => {
      await verifying.close()
    })

    const errorType = (response: Response): string | null => response.headers.get('x-amzn-errortype')?.split(':')[0] ?? null

    it('accepts a correct signature, from the AWS signer and from the gateway signer', async () => {
      expect((await signedPost(modelPath, converseBody, { target: verifying })).status).toBe(200)
      const url = `${verifying.url}${modelPath}`
      const payload = JSON.stringify(converseBody)
      const added = await signAwsRequest(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: payload },
        { accessKeyId: 'AKIDSIMULATOR', secretAccessKey: 'simulator-secret', region: 'eu-west-1', service: 'bedrock' },
      )
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...added }, body: payload })
      expect(response.status).toBe(200)
    })

    it('refuses a changed body, a wrong secret, an unknown key and a stale date', async () => {
      const tampered = await signedPost(modelPath, converseBody, { target: verifying, tamperedBody: JSON.stringify({ ...converseBody, extra: 1 }) })
      expect(tampered.status).toBe(403)
      expect(errorType(tampered)).toBe('InvalidSignatureException')
      expect(errorType(await signedPost(modelPath, converseBody, { target: verifying, secretAccessKey: 'wrong' }))).toBe('InvalidSignatureException')
      expect(errorType(await signedPost(modelPath, converseBody, { target: verifying, accessKeyId: 'AKIDOTHER' }))).toBe('UnrecognizedClientException')
      const stale = await signedPost(modelPath, converseBody, { target: verifying, signingDate: new Date(Date.now() - 10 * 60_000) })
      expect(errorType(stale)).toBe('InvalidSignatureException')
      expect(((await stale.json()) as { message: string }).message).toMatch(/^Signature expired/)
    })
  })
})
