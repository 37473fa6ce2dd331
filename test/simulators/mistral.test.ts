import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { startMistralSimulator } from './mistral.ts'

let sim: Simulator
let client: OpenAI

beforeAll(async () => {
  sim = await startMistralSimulator({ chunks: 3, apiKeys: ['mistral-key'] })
  client = new OpenAI({ apiKey: 'mistral-key', baseURL: sim.baseUrl, maxRetries: 0 })
})

afterEach(() => {
  sim.reset()
})

afterAll(async () => {
  await sim.close()
})

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }

function post(path: string, body: unknown): Promise<Response> {
  return fetch(sim.baseUrl + path, { method: 'POST', headers: { authorization: 'Bearer mistral-key', 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

describe('Mistral simulator', () => {
  it('answers chat with plain usage', async () => {
    const completion = await client.chat.completions.create({ model: 'mistral-large-latest', messages: [{ role: 'user', content: 'bonjour' }] })
    expect(completion.id).toMatch(/^[0-9a-f]{32}$/)
    expect(completion.choices[0]?.message.content).toBe('Echo: bonjour alpha bravo')
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 })
  })

  it('streams usage on the finish chunk without stream_options', async () => {
    const stream = await client.chat.completions.create({ model: 'mistral-small-latest', stream: true, messages: [{ role: 'user', content: 'x' }] })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    const last = chunks.at(-1)!
    expect(last.choices[0]?.finish_reason).toBe('stop')
    expect(last.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 })
    expect(chunks.some((chunk) => chunk.choices.length === 0)).toBe(false)
  })

  it("streams a tool call whole and accepts tool_choice 'any'", async () => {
    const stream = await client.chat.completions.create({
      model: 'mistral-large-latest',
      stream: true,
      tools: [weatherTool],
      tool_choice: 'any' as unknown as 'required',
      messages: [{ role: 'user', content: 'anything' }],
    })
    const calls = []
    for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) calls.push(call)
    expect(calls).toHaveLength(1)
    expect(calls[0]?.id).toHaveLength(9)
    expect(JSON.parse(calls[0]!.function!.arguments!)).toEqual({ location: 'Paris' })
  })

  it('embeds with mistral-embed', async () => {
    const result = await client.embeddings.create({ model: 'mistral-embed', input: ['a'], encoding_format: 'float' })
    expect(result.data[0]?.embedding).toHaveLength(1024)
  })

  it('reads pages of an inline PDF with OCR', async () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >> endobj\n2 0 obj << /Type /Page >> endobj\n3 0 obj << /Type /Page >> endobj\n%%EOF')
    const response = await post('/ocr', {
      model: 'mistral-ocr-latest',
      document: { type: 'document_url', document_url: `data:application/pdf;base64,${pdf.toString('base64')}`, document_name: 'report.pdf' },
    })
    const body = (await response.json()) as { pages: Array<{ index: number; markdown: string }>; usage_info: { pages_processed: number; doc_size_bytes: number } }
    expect(body.pages.map((page) => page.index)).toEqual([0, 1])
    expect(body.pages[1]?.markdown).toContain('report.pdf, page 2')
    expect(body.usage_info).toEqual({ pages_processed: 2, doc_size_bytes: pdf.length })
    const missing = await post('/ocr', { model: 'mistral-ocr-latest', document: {} })
    expect(missing.status).toBe(422)
  })

  it('answers Mistral-shaped errors', async () => {
    const unauthorized = await fetch(`${sim.baseUrl}/chat/completions`, { method: 'POST', body: '{}' })
    expect(unauthorized.status).toBe(401)
    expect(await unauthorized.json()).toMatchObject({ message: 'Unauthorized' })
    sim.script({ status: 429 })
    const limited = await client.chat.completions.create({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError)
    const invalid = await post('/chat/completions', { model: 'mistral-small-latest', messages: [] })
    expect(await invalid.json()).toMatchObject({ object: 'error', type: 'invalid_request_error', param: 'messages' })
  })
})
